import { readFileSync } from 'node:fs';
import { parse, type GraphQLError } from 'graphql';
import type { Kind } from './setting.js';

/** The operations a gateway may run, by their id: the documents' text as the file holds it. */
export type TrustedDocuments = ReadonlyMap<string, string>;

/**
 * A path to a JSON file of id → GraphQL document (`{"<sha256 or md5>": "query Q { … }"}`, the
 * shape Relay's persisted-query file has), read and checked once at boot: a missing or unreadable
 * file, text that is not JSON, anything but an object of non-empty strings, an empty object or a
 * document that does not parse is a boot error, never a refusal found later at request time. The
 * ids are opaque: whatever the client sends (a SHA-256, Relay's MD5), not checked against the text.
 */
export function trustedDocuments(): Kind<TrustedDocuments> {
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
      } catch (error) {
        throw new Error(
          `must name a JSON file ("${path}" is not JSON: ${(error as Error).message})`,
        );
      }
      const shape = `a JSON object of operation id → document text, e.g. {"<sha256>": "query Q { … }"}`;
      if (json === null || typeof json !== 'object' || Array.isArray(json)) {
        throw new Error(`must name ${shape} ("${path}" holds ${describe(json)})`);
      }
      const documents = new Map<string, string>();
      for (const [id, document] of Object.entries(json)) {
        if (id.trim() === '' || typeof document !== 'string' || document.trim() === '') {
          const what = id.trim() === '' ? 'an empty id' : `${describe(document)} at "${id}"`;
          throw new Error(`must name ${shape} ("${path}" holds ${what})`);
        }
        try {
          parse(document);
        } catch (error) {
          const at = (error as GraphQLError).locations?.[0];
          const where = at ? ` at line ${at.line}, column ${at.column}` : '';
          throw new Error(
            `must name a file of GraphQL documents (in "${path}", the document "${id}" does not parse${where}: ${(error as Error).message})`,
          );
        }
        documents.set(id, document);
      }
      if (documents.size === 0) {
        throw new Error(`must name a file that lists at least one document ("${path}" is empty)`);
      }
      return documents;
    },
  };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value.trim() === '' ? 'an empty string' : 'a string';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
