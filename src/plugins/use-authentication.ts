import type { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { AuthFailure, type Authenticate, type Caller } from '../auth/create-authenticator.js';
import { ErrorCode, gatewayError } from '../errors.js';

/** Options of {@link useAuthentication}. */
export interface AuthenticationOptions {
  /** Resolves a request's caller (built once per gateway: `createAuthenticator`). */
  authenticate: Authenticate;
  /** Where each request's caller is kept for the context to read, by its request. */
  callers: WeakMap<Request, Caller>;
}

/** `text` as an RFC 6750 quoted string: printable ASCII, without `"` and `\`. */
function quoted(text: string): string {
  return `"${text.replace(/[^\x20-\x7e]|["\\]/g, '')}"`;
}

/**
 * The refusal of `failure`: 401 UNAUTHENTICATED with `WWW-Authenticate: Bearer`, plus
 * `error="invalid_token"` and its reason where a token was sent (RFC 6750, section 3); 403
 * FORBIDDEN for a valid token whose workspace has no key; 503 AUTH_UNAVAILABLE when the identity
 * provider's keys could not be fetched (the token could not be checked).
 */
function refusal(failure: AuthFailure): GraphQLError {
  if (failure.kind === 'no-upstream-key') {
    return gatewayError(ErrorCode.FORBIDDEN, failure.message);
  }
  if (failure.kind === 'keys-unavailable') {
    return gatewayError(ErrorCode.AUTH_UNAVAILABLE, failure.message);
  }
  const error = gatewayError(ErrorCode.UNAUTHENTICATED, failure.message);
  if (failure.kind === 'invalid-token') {
    (error.extensions['http'] as { headers?: object }).headers = {
      'WWW-Authenticate': `Bearer error="invalid_token", error_description=${quoted(failure.message)}`,
    };
  }
  return error;
}

/**
 * Resolves the caller of each GraphQL request before anything of it runs (its document is not
 * even read): the operations of a request refused here are answered 401 or 403 and send nothing
 * upstream. Requests that run no operation (GraphiQL's page, health, metrics, CORS preflights) are
 * not GraphQL requests, and pass. The caller is kept in `callers` for `createContext`.
 */
export function useAuthentication({ authenticate, callers }: AuthenticationOptions): Plugin {
  const keep = (request: Request) => (caller: Caller) => {
    callers.set(request, caller);
  };
  const refuse = (error: unknown) => {
    throw error instanceof AuthFailure ? refusal(error) : error;
  };
  return {
    // Not async: with an API key, or a token verified before, the request goes on at once.
    onParams({ request }) {
      if (callers.has(request)) return;
      let caller: Caller | Promise<Caller>;
      try {
        caller = authenticate(request.headers);
      } catch (error) {
        return refuse(error);
      }
      if (caller instanceof Promise) return caller.then(keep(request), refuse);
      keep(request)(caller);
    },
  };
}
