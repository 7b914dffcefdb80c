import { createHash } from 'node:crypto';
import type { GraphQLParams } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { TrustedDocuments } from '../config/trusted-documents.js';
import { ErrorCode, gatewayError } from '../errors.js';

/** Where other clients put an operation's id: Relay's `doc_id`, GraphQL-over-HTTP's `documentId`. */
const ID_PARAMETERS = ['documentId', 'doc_id'] as const;

/** The `sha256Hash` of an `extensions.persistedQuery` of version 1 (Apollo Client, urql); else null. */
function persistedQueryHash(params: GraphQLParams): string | null {
  const persisted = (params.extensions as Record<string, unknown> | undefined)?.[
    'persistedQuery'
  ] as Record<string, unknown> | null | undefined;
  if (persisted?.['version'] !== 1 || typeof persisted['sha256Hash'] !== 'string') return null;
  return persisted['sha256Hash'];
}

/**
 * The id a request names: `extensions.persistedQuery.sha256Hash` (Apollo Client, urql), else a
 * `documentId` or `doc_id` in the body or, for a GET, in its query string (`search`); null if none.
 */
export function operationIdOf(
  params: GraphQLParams,
  search?: URLSearchParams | null,
): string | null {
  const fromExtensions = persistedQueryHash(params);
  if (fromExtensions) return fromExtensions;
  const body = params as Record<string, unknown>;
  for (const name of ID_PARAMETERS) {
    const id = body[name] ?? search?.get(name);
    if (typeof id === 'string' && id !== '') return id;
  }
  return null;
}

const ONLY_IDS = `This gateway runs only its trusted documents (TRUSTED_DOCUMENTS): send the id of a listed operation (extensions.persistedQuery.sha256Hash, documentId or doc_id) instead of its text.`;

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** Bounds of the store of automatic persisted queries (per process). */
export interface ApqBounds {
  /** Most documents held (default 4,096). */
  maxDocuments?: number;
  /** Most query text held, in UTF-16 code units, about bytes (default 16 Mi). */
  maxChars?: number;
}

/**
 * Which documents run, for every door (HTTP and WebSocket alike): the parameters of a request
 * with the document it runs in `query`, or a coded refusal thrown.
 *
 * With trusted documents (`TRUSTED_DOCUMENTS`), only the listed operations run, named by their id:
 * query text is refused (PERSISTED_QUERY_ID_REQUIRED) whatever it holds, and so is an APQ
 * registration, so that no request adds an operation; an id that is not listed is refused
 * (PERSISTED_QUERY_NOT_IN_LIST, not APQ's PERSISTED_QUERY_NOT_FOUND, on which Apollo Client and
 * urql would only send the text that is refused next). A listed document is then parsed and
 * validated as sent text is, so the query limits and the estimate apply to it the same.
 *
 * Without them, any text runs, and automatic persisted queries (Apollo's protocol) too: a hash
 * alone runs the query registered under it, or fails PERSISTED_QUERY_NOT_FOUND (404) so that the
 * client sends it again with the query; a hash with a query registers it, once its SHA-256 is
 * checked (else PERSISTED_QUERY_MISMATCH, 400). One store serves every caller, and may: an entry
 * is only written under the hash of its own text, so a caller gets back only a document whose
 * hash it already had; it holds query text, never variables, results or keys. The store is an
 * LRU bounded by count and by size; an eviction costs its client one round trip, never a wrong
 * answer; each process has its own. (`@graphql-yoga/plugin-apq` is not used: its one release for
 * Yoga 5 declares a peer that Yoga 5.24 rules out.)
 */
export class Documents {
  readonly #trusted: TrustedDocuments | null;
  readonly #apq: LRUCache<string, string> | null;

  constructor(trusted: TrustedDocuments | null, bounds: ApqBounds = {}) {
    this.#trusted = trusted;
    this.#apq = trusted
      ? null
      : new LRUCache<string, string>({
          max: bounds.maxDocuments ?? 4_096,
          maxSize: bounds.maxChars ?? 16 * 1024 * 1024,
          sizeCalculation: (query) => Math.max(query.length, 1),
        });
  }

  /** `params` with the document that runs, or a coded refusal thrown. */
  resolve(params: GraphQLParams, search?: URLSearchParams | null): GraphQLParams {
    return this.#trusted ? this.#listed(this.#trusted, params, search) : this.#persisted(params);
  }

  #listed(
    trusted: TrustedDocuments,
    params: GraphQLParams,
    search?: URLSearchParams | null,
  ): GraphQLParams {
    if (params.query) throw gatewayError(ErrorCode.PERSISTED_QUERY_ID_REQUIRED, ONLY_IDS);
    const id = operationIdOf(params, search);
    if (id === null) throw gatewayError(ErrorCode.PERSISTED_QUERY_ID_REQUIRED, ONLY_IDS);
    // The GraphQL-over-HTTP proposal prefixes a `documentId` with its hash's name.
    const query = trusted.get(id) ?? trusted.get(id.replace(/^sha256:/, ''));
    if (query === undefined) {
      throw gatewayError(
        ErrorCode.PERSISTED_QUERY_NOT_IN_LIST,
        'The operation id sent is not in the trusted documents of this gateway (TRUSTED_DOCUMENTS): only the operations listed there run. Send the id of a listed operation, or add the operation to the list.',
      );
    }
    // The id's own member (`doc_id`, `documentId`) is not a GraphQL parameter Yoga takes.
    const { operationName, variables, extensions } = params;
    return { query, operationName, variables, extensions };
  }

  #persisted(params: GraphQLParams): GraphQLParams {
    const hash = persistedQueryHash(params)?.toLowerCase();
    if (hash === undefined || !this.#apq) return params;
    if (params.query == null || params.query === '') {
      const query = this.#apq.get(hash);
      if (query === undefined) {
        throw gatewayError(ErrorCode.PERSISTED_QUERY_NOT_FOUND, 'PersistedQueryNotFound');
      }
      return { ...params, query };
    }
    if (typeof params.query === 'string') {
      if (sha256(params.query) !== hash) {
        throw gatewayError(
          ErrorCode.PERSISTED_QUERY_MISMATCH,
          'PersistedQueryMismatch: extensions.persistedQuery.sha256Hash is not the SHA-256 of the query sent with it; hash the exact query text (UTF-8, hex digest).',
        );
      }
      this.#apq.set(hash, params.query);
    }
    return params;
  }
}
