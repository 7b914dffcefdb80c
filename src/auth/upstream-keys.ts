import type { Kind } from '../config/setting.js';
import { readStringMapFile } from '../config/string-map-file.js';

/** The service's API key of each workspace, by the value of the token's workspace claim. */
export type UpstreamKeys = ReadonlyMap<string, string>;

/**
 * A path to a JSON file of workspace → API key (`{"acme": "sk_live_…", "globex": "sk_live_…"}`),
 * read and checked once at boot, as `TRUSTED_DOCUMENTS` is: a missing or unreadable file, text that
 * is not JSON, anything but an object of non-empty strings, or an empty object is a boot error. No
 * message quotes a key.
 */
export function upstreamKeysFile(): Kind<UpstreamKeys> {
  return {
    parse: (raw) =>
      readStringMapFile(raw, {
        shape: 'a JSON object of workspace → API key, e.g. {"acme": "<key>"}',
        name: 'workspace',
        value: 'key',
        listed: 'workspace',
        secret: true,
      }),
  };
}

/** The workspace a token's `claim` names: a string, or a number read as text; null for none. */
export function workspaceOf(
  claims: Readonly<Record<string, unknown>>,
  claim: string,
): string | null {
  const workspace = claims[claim];
  if (typeof workspace !== 'string' && typeof workspace !== 'number') return null;
  return String(workspace);
}

/**
 * The upstream key of a verified token's caller, or null when its workspace has none: the one
 * `UPSTREAM_API_KEY` for every token, else the key `UPSTREAM_KEYS_FILE` gives its workspace (the
 * value of its `claim`, {@link workspaceOf}).
 */
export function upstreamKeyOf(
  source: UpstreamKeySource,
  claims: Readonly<Record<string, unknown>>,
): string | null {
  if ('key' in source) return source.key;
  const workspace = workspaceOf(claims, source.claim);
  return workspace === null ? null : (source.keys.get(workspace) ?? null);
}

/** Where the upstream key of a token's caller comes from: one key, or a key per workspace. */
export type UpstreamKeySource = { key: string } | { keys: UpstreamKeys; claim: string };

/**
 * The source `AUTH_MODE=jwt` reads callers' upstream keys from: `UPSTREAM_API_KEY` for every
 * token, else `UPSTREAM_KEYS_FILE` by the `JWT_WORKSPACE_CLAIM`; null when neither is set.
 */
export function upstreamKeySource(config: {
  upstreamApiKey?: string | null;
  upstreamKeys?: UpstreamKeys | null;
  jwtWorkspaceClaim: string;
}): UpstreamKeySource | null {
  if (config.upstreamApiKey) return { key: config.upstreamApiKey };
  if (config.upstreamKeys) return { keys: config.upstreamKeys, claim: config.jwtWorkspaceClaim };
  return null;
}
