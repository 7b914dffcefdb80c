import { parse, type GraphQLError } from 'graphql';
import type { Kind } from './setting.js';
import { readStringMapFile } from './string-map-file.js';

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
    parse: (raw) =>
      readStringMapFile(raw, {
        shape: `a JSON object of operation id → document text, e.g. {"<sha256>": "query Q { … }"}`,
        name: 'id',
        value: 'document',
        listed: 'document',
        check(id, document, path) {
          try {
            parse(document);
          } catch (error) {
            const at = (error as GraphQLError).locations?.[0];
            const where = at ? ` at line ${at.line}, column ${at.column}` : '';
            throw new Error(
              `must name a file of GraphQL documents (in "${path}", the document "${id}" does not parse${where}: ${(error as Error).message})`,
            );
          }
        },
      }),
  };
}
