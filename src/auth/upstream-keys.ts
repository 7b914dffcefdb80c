import { readFileSync } from 'node:fs';
import type { Kind } from '../config/setting.js';

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
    parse(raw) {
      const path = raw.trim();
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (error) {
        // Node's message without the path, said already: `ENOENT: no such file or directory`.
        const reason = (error as Error).message.split(', ')[0];
        throw new Error(`must name a readable JSON file (cannot read "${path}": ${reason})`);
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        // JSON.parse's message may quote the text, which holds keys.
        throw new Error(`must name a JSON file ("${path}" is not JSON)`);
      }
      const shape = 'a JSON object of workspace → API key, e.g. {"acme": "<key>"}';
      if (json === null || typeof json !== 'object' || Array.isArray(json)) {
        throw new Error(
          `must name ${shape} ("${path}" holds ${Array.isArray(json) ? 'an array' : typeof json === 'object' ? 'null' : `a ${typeof json}`})`,
        );
      }
      const keys = new Map<string, string>();
      for (const [workspace, key] of Object.entries(json)) {
        if (workspace.trim() === '')
          throw new Error(`must name ${shape} ("${path}" holds an empty workspace)`);
        if (typeof key !== 'string' || key.trim() === '') {
          throw new Error(`must name ${shape} ("${path}" holds no key at "${workspace}")`);
        }
        keys.set(workspace, key.trim());
      }
      if (keys.size === 0) {
        throw new Error(`must name a file that lists at least one workspace ("${path}" is empty)`);
      }
      return keys;
    },
  };
}

/**
 * The upstream key of a verified token's caller, or null when its workspace has none: the one
 * `UPSTREAM_API_KEY` for every token, else the key `UPSTREAM_KEYS_FILE` gives the value of its
 * `claim` (a string, or a number read as text).
 */
export function upstreamKeyOf(
  source: { key: string } | { keys: UpstreamKeys; claim: string },
  claims: Readonly<Record<string, unknown>>,
): string | null {
  if ('key' in source) return source.key;
  const workspace = claims[source.claim];
  if (typeof workspace !== 'string' && typeof workspace !== 'number') return null;
  return source.keys.get(String(workspace)) ?? null;
}
