import { readFileSync } from 'node:fs';

/** How one setting's JSON file of name → text is described and checked. */
export interface StringMapSpec {
  /** What the file must hold, for messages: `a JSON object of …, e.g. {…}`. */
  shape: string;
  /** What a name is (`id`, `workspace`). */
  name: string;
  /** What a value is (`document`, `key`). */
  value: string;
  /** What the file lists at least one of (`document`, `workspace`). */
  listed: string;
  /** The values are secrets: no message describes or quotes them (nor JSON's own text). */
  secret?: boolean;
  /** Checks one entry (throws a message); absent, any non-empty string will do. */
  check?(name: string, value: string, path: string): void;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value.trim() === '' ? 'an empty string' : 'a string';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * Reads the file `raw` names, once at boot: a missing or unreadable file, text that is not JSON,
 * anything but an object of non-empty strings, or an empty object is a boot error whose message
 * names the file and the rule (read as a setting's message: `X must name …`). Secret values are
 * trimmed; others kept as written.
 */
export function readStringMapFile(raw: string, spec: StringMapSpec): Map<string, string> {
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
  } catch (error) {
    // JSON.parse's message may quote the text, which may hold secrets.
    const why = spec.secret ? '' : `: ${(error as Error).message}`;
    throw new Error(`must name a JSON file ("${path}" is not JSON${why})`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new Error(`must name ${spec.shape} ("${path}" holds ${describe(json)})`);
  }
  const entries = new Map<string, string>();
  for (const [name, value] of Object.entries(json)) {
    if (name.trim() === '') {
      throw new Error(`must name ${spec.shape} ("${path}" holds an empty ${spec.name})`);
    }
    if (typeof value !== 'string' || value.trim() === '') {
      const what = spec.secret ? `no ${spec.value}` : describe(value);
      throw new Error(`must name ${spec.shape} ("${path}" holds ${what} at "${name}")`);
    }
    spec.check?.(name, value, path);
    entries.set(name, spec.secret ? value.trim() : value);
  }
  if (entries.size === 0) {
    throw new Error(`must name a file that lists at least one ${spec.listed} ("${path}" is empty)`);
  }
  return entries;
}
