import { createHmac, hash } from 'node:crypto';
import { constantTimeEqual } from '../constant-time-equal.js';
import { LRUCache } from 'lru-cache';
import { ErrorCode, gatewayError } from '../errors.js';

/**
 * A type name as ids write it (a GraphQL object type's name). Which names are node types is the
 * registry's to say (`node-types.ts`): this module only writes, signs and reads ids.
 */
const TYPENAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a UUID string in the 8-4-4-4-12 hex form. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/**
 * A node's local id as written: the service's UUID plus the lookup hints the upstream needs to
 * find the record again (it has no fetch-by-id endpoint), by position. Each node type names its
 * hints once, in `NodeType`; read ids through it, not by position.
 */
export interface LocalId {
  uuid: string;
  hints: string[];
}

/** Percent-encodes a hint only when it holds the separator or a `%` (ids are made per record). */
function escapeHint(hint: string | null | undefined) {
  if (!hint) return '';
  return hint.includes('|') || hint.includes('%') ? encodeURIComponent(hint) : hint;
}

/** `uuid|hint|hint`, hints escaped so that none can contain the separator. */
export function formatLocalId(uuid: string, ...hints: (string | null | undefined)[]): string {
  let id = uuid;
  for (const hint of hints) id += `|${escapeHint(hint)}`;
  return id;
}

/** The keys derived from one secret, and the ids already written with them. */
interface IdKeys {
  inner: string;
  outer: string;
  /**
   * By type, `localId` → the global id written for it. Keyed by the local id as the record holds
   * it, not by `Type:localId`: a fresh concatenation per lookup had to be flattened and hashed
   * (about 28 KB and 2× the time of a lookup, 20-event list).
   */
  issued: Map<string, LRUCache<string, string>>;
}

/**
 * Ids remembered per secret and node type. A list hands out the same ids again and again (the same
 * companies under many events, the same page reloaded), and two SHA-256 hashes per id were the
 * largest cost signing added to a list request; a hit is a map lookup, cheaper than the base64url
 * alone. About 200 bytes per entry; with the schema's node types, some 5 MB at the most.
 */
const IDS_REMEMBERED_PER_TYPE = 4_000;

/** Keys derived once per secret (a process has one or two), not per id written. */
const keysBySecret = new Map<string, IdKeys>();

/**
 * The id-signing keys derived from `secret`: two 64-character hex strings, each one SHA-256 block
 * when hashed (ASCII, so a byte per character). Their labels hold no newline, so no cursor's
 * signed text (always `boundTo\nupstream`) is ever one of them: a cursor signature never serves
 * as an id key or an id signature.
 */
function idKeys(secret: string): IdKeys {
  let keys = keysBySecret.get(secret);
  if (!keys) {
    const derive = (label: string) =>
      createHmac('sha256', secret)
        .update(`business-signals-gateway/global-id/v1/${label}`)
        .digest('hex');
    keys = {
      inner: derive('inner'),
      outer: derive('outer'),
      issued: new Map(),
    };
    keysBySecret.set(secret, keys);
  }
  return keys;
}

/** Characters of the signature: 96 bits of base64url. */
const MAC_LENGTH = 16;

/**
 * The signature of `Type:localId`: `H(outer ‖ H(inner ‖ text))` with SHA-256, one-block keys and
 * the inner digest as base64url text. That is HMAC's construction with independent keys (the
 * outer hash hides the inner state, so no length extension), at half the cost of `createHmac`
 * because `crypto.hash` makes no hash object: about 1.3 µs against 2.5 µs.
 */
function mac(text: string, secret: string): string {
  const { inner, outer } = idKeys(secret);
  return hash('sha256', outer + hash('sha256', inner + text, 'base64url'), 'base64url').slice(
    0,
    MAC_LENGTH,
  );
}

const PIPE = '|'.charCodeAt(0);

/** True when a local id carries a hint that is not empty: something to look the record up by. */
function hasHints(localId: string): boolean {
  const bar = localId.indexOf('|');
  if (bar < 0) return false;
  for (let i = bar + 1; i < localId.length; i++) if (localId.charCodeAt(i) !== PIPE) return true;
  return false;
}

/**
 * Opaque Relay global id: base64url of `Type:localId`. An id that carries hints is signed with a
 * key derived from `secret` (`<base64url>.<signature>`; base64url has no `.`), since its hints
 * drive lookups that spend the caller's credits; one without (a UUID alone) is left unsigned.
 */
export function encodeGlobalId(
  typename: string,
  localId: string | number | bigint,
  secret: string,
): string {
  const local = String(localId);
  const { issued } = idKeys(secret);
  let ofType = issued.get(typename);
  if (!ofType) issued.set(typename, (ofType = new LRUCache({ max: IDS_REMEMBERED_PER_TYPE })));
  let id = ofType.get(local);
  if (id === undefined) {
    const text = `${typename}:${local}`;
    const encoded = Buffer.from(text).toString('base64url');
    id = hasHints(local) ? `${encoded}.${mac(text, secret)}` : encoded;
    ofType.set(local, id);
  }
  return id;
}

/** What a global id turned out to be: one this gateway issued, or why it is not. */
export type GlobalIdReading =
  { ok: true; typename: string; localId: string } | { ok: false; reason: 'malformed' | 'forged' };

/**
 * Reads a global id without throwing. `forged`: well-formed, but its hints are not signed with
 * `secret` (signature missing, altered or truncated, or the hints altered), or it is signed
 * without having hints; nothing it says may be acted on.
 */
export function inspectGlobalId(globalId: string, secret: string): GlobalIdReading {
  const dot = globalId.indexOf('.');
  const encoded = dot < 0 ? globalId : globalId.slice(0, dot);
  const text = Buffer.from(encoded, 'base64url').toString('utf8');
  const colon = text.indexOf(':');
  const typename = text.slice(0, colon);
  const localId = text.slice(colon + 1);
  if (colon < 1 || !TYPENAME.test(typename)) return { ok: false, reason: 'malformed' };
  try {
    if (!isUuid(parseLocalId(localId).uuid)) return { ok: false, reason: 'malformed' };
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  const given = dot < 0 ? null : globalId.slice(dot + 1);
  const verified = hasHints(localId)
    ? given !== null && constantTimeEqual(mac(text, secret), given)
    : given === null;
  if (!verified) return { ok: false, reason: 'forged' };
  return { ok: true, typename, localId };
}

/** INVALID_INPUT naming `argument`, for an id that {@link inspectGlobalId} refused. */
export function refusedId(argument: string, value: string, reason: 'malformed' | 'forged') {
  const shown = value.length > 80 ? `${value.slice(0, 80)}…` : value;
  const why = reason === 'forged' ? ' (altered, or signed with another CURSOR_SECRET)' : '';
  return gatewayError(
    ErrorCode.INVALID_INPUT,
    `Argument "${argument}": "${shown}" is not an id this gateway issued${why}.`,
    { argument },
  );
}

/** Splits a local id back into the UUID and its hints. */
export function parseLocalId(localId: string): LocalId {
  const [uuid = '', ...hints] = localId.split('|');
  return { uuid, hints: hints.map((hint) => decodeURIComponent(hint)) };
}
