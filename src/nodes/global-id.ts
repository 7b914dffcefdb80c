import { ErrorCode, gatewayError } from '../errors.js';

/** The node types, each refetchable through `Query.node`. */
export const NODE_TYPES = [
  'Company',
  'Investor',
  'Person',
  'ExecMove',
  'Acquisition',
  'FundingEvent',
] as const;

export type NodeTypeName = (typeof NODE_TYPES)[number];

const nodeTypes: ReadonlySet<string> = new Set(NODE_TYPES);

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

/** Opaque Relay global id: base64url of `Type:localId`. */
export function encodeGlobalId(typename: string, localId: string | number | bigint): string {
  return Buffer.from(`${typename}:${localId}`).toString('base64url');
}

function badId(argument: string, value: string) {
  return gatewayError(
    ErrorCode.INVALID_INPUT,
    `Argument "${argument}": "${value.length > 80 ? `${value.slice(0, 80)}…` : value}" is not an id this gateway issued.`,
    { argument },
  );
}

/** Decodes a global id; throws INVALID_INPUT (naming `argument`) when it is not one of ours. */
export function decodeGlobalId(globalId: string, argument = 'id') {
  const text = Buffer.from(globalId, 'base64url').toString('utf8');
  const colon = text.indexOf(':');
  const typename = text.slice(0, colon);
  const id = text.slice(colon + 1);
  if (colon < 1 || !nodeTypes.has(typename)) throw badId(argument, globalId);
  let local: LocalId;
  try {
    local = parseLocalId(id);
  } catch {
    throw badId(argument, globalId);
  }
  if (!isUuid(local.uuid)) throw badId(argument, globalId);
  return { typename: typename as NodeTypeName, id };
}

/** Splits a local id back into the UUID and its hints. */
export function parseLocalId(localId: string): LocalId {
  const [uuid = '', ...hints] = localId.split('|');
  return { uuid, hints: hints.map((hint) => decodeURIComponent(hint)) };
}
