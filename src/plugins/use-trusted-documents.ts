import {
  defaultExtractPersistedOperationId,
  usePersistedOperations,
} from '@graphql-yoga/plugin-persisted-operations';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import type { TrustedDocuments } from '../config/trusted-documents.js';
import { ErrorCode, gatewayError, type GatewayErrorCode } from '../errors.js';

/** Where other clients put an operation's id: Relay's `doc_id`, GraphQL-over-HTTP's `documentId`. */
const ID_PARAMETERS = ['documentId', 'doc_id'] as const;

/**
 * The id a request names: `extensions.persistedQuery.sha256Hash` (Apollo Client, urql), else a
 * `documentId` or `doc_id` in the JSON body or, for a GET, in the query string; null if none.
 */
export function operationIdOf(params: GraphQLParams, request: Request): string | null {
  const fromExtensions = defaultExtractPersistedOperationId(params, request, {});
  if (fromExtensions) return fromExtensions;
  const body = params as Record<string, unknown>;
  const search = request.method === 'GET' ? new URL(request.url).searchParams : null;
  for (const name of ID_PARAMETERS) {
    const id = body[name] ?? search?.get(name);
    if (typeof id === 'string' && id !== '') return id;
  }
  return null;
}

/** The trusted document an id names, or null. */
export function trustedDocument(documents: TrustedDocuments, id: string): string | null {
  // The GraphQL-over-HTTP proposal prefixes a `documentId` with its hash's name.
  return documents.get(id) ?? documents.get(id.replace(/^sha256:/, '')) ?? null;
}

/** A refusal, made afresh each time it is thrown. */
function refusal(code: GatewayErrorCode, message: string) {
  return () => gatewayError(code, message);
}

export const ONLY_IDS = `This gateway runs only its trusted documents (TRUSTED_DOCUMENTS): send the id of a listed operation (extensions.persistedQuery.sha256Hash, documentId or doc_id) instead of its text.`;

/**
 * Trusted documents: only the operations of `documents` run, named by their id. Query text is
 * refused (PERSISTED_QUERY_ID_REQUIRED), whatever it holds, and so is an APQ registration (query
 * and hash): no request adds an operation, so useApq is not installed beside this. An id that is
 * not listed is refused too (PERSISTED_QUERY_NOT_IN_LIST, not APQ's PERSISTED_QUERY_NOT_FOUND,
 * on which Apollo Client and urql would only send the text that is refused next). A listed
 * document is parsed and validated as sent text is, so the query limits and the credit estimate
 * apply to it the same.
 */
export function useTrustedDocuments(documents: TrustedDocuments): Plugin {
  return usePersistedOperations({
    getPersistedOperation: (id) => trustedDocument(documents, id),
    extractPersistedOperationId: operationIdOf,
    allowArbitraryOperations: false,
    customErrors: {
      notFound: refusal(
        ErrorCode.PERSISTED_QUERY_NOT_IN_LIST,
        'The operation id sent is not in the trusted documents of this gateway (TRUSTED_DOCUMENTS): only the operations listed there run. Send the id of a listed operation, or add the operation to the list.',
      ),
      persistedQueryOnly: refusal(ErrorCode.PERSISTED_QUERY_ID_REQUIRED, ONLY_IDS),
      keyNotFound: refusal(ErrorCode.PERSISTED_QUERY_ID_REQUIRED, ONLY_IDS),
    },
  });
}
