import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ExecutionArgs, GraphQLError } from 'graphql';
import type { Context as WsContext } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { App } from '../app.js';
import { AuthFailure, type Authenticate, type Caller } from '../auth/create-authenticator.js';
import type { TrustedDocuments } from '../config/trusted-documents.js';
import { ErrorCode, gatewayError } from '../errors.js';
import type { Logger } from '../logging/create-logger.js';

/** Options of {@link serveWebSocket}. */
export interface WebSocketOptions {
  /** The GraphQL app whose plugins, schema and context every operation goes through. */
  app: App;
  authenticate: Authenticate;
  /** Only these documents run, named by id (`TRUSTED_DOCUMENTS`); null, any document. */
  trustedDocuments: TrustedDocuments | null;
  logger: Logger;
  /** The path upgrades are accepted on. */
  path: string;
}

/** A served WebSocket endpoint. */
export interface ServedWebSocket {
  /** Closes every socket (`1001 Going away`), after their subscriptions completed. */
  close(): Promise<void>;
}

/** Per connection: its caller, and the headers its operations see, from `connection_init`. */
interface Connection {
  caller: Caller;
  headers: Headers;
}

/** At shutdown, how long the subscriptions' `complete` messages may take to go out. */
const COMPLETE_WAIT_MS = 1_000;

/** The most characters of a close reason (the protocol allows 123 bytes). */
const REASON_MAX = 120;

/**
 * `connection_init`'s payload as request headers: a browser cannot set headers on a WebSocket,
 * so the key, the token and `X-Credit-Budget` come there, under their header names in any case
 * (`{ "X-API-Key": "…" }`, `{ "authorization": "Bearer …" }`). Values that are not strings,
 * numbers or booleans are left out.
 */
export function headersOf(payload: unknown): Headers {
  const headers = new Headers();
  if (typeof payload !== 'object' || payload === null) return headers;
  for (const [name, value] of Object.entries(payload)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      try {
        headers.set(name, String(value));
      } catch {
        // A value a header cannot hold (a newline): left out.
      }
    }
  }
  return headers;
}

/** The id a subscribe message names a trusted document by, as over HTTP. */
function documentIdOf(payload: { extensions?: unknown } & Record<string, unknown>): string | null {
  const extensions = payload.extensions as
    { persistedQuery?: { sha256Hash?: unknown } } | undefined;
  const hash = extensions?.persistedQuery?.sha256Hash;
  if (typeof hash === 'string' && hash !== '') return hash;
  for (const name of ['documentId', 'doc_id']) {
    const id = payload[name];
    if (typeof id === 'string' && id !== '') return id.replace(/^sha256:/, '');
  }
  return null;
}

/**
 * GraphQL over WebSocket (the `graphql-transport-ws` protocol, the `graphql-ws` library on `ws`)
 * on `server` at `path`, beside the HTTP endpoint on the same path. `connection_init` is
 * authenticated as an HTTP request's headers would be (a refusal closes the socket with 4403 and
 * the reason); each operation then runs through the app's own parse, validation, plugins and
 * context (its budget, quota and credits), as the graphql-ws recipe of Yoga does.
 */
export function serveWebSocket(server: Server, options: WebSocketOptions): ServedWebSocket {
  const { app, authenticate, trustedDocuments, logger } = options;
  const wss = new WebSocketServer({ server, path: options.path });
  const connections = new WeakMap<object, Connection>();
  // Operations under way: shutdown lets their `complete` messages go out before closing sockets.
  let active = 0;
  type Ctx = WsContext<Record<string, unknown> | undefined, { socket: unknown; request: unknown }>;

  const disposable = useServer(
    {
      execute: (args) => (args.rootValue as Enveloped).execute(args),
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args),
      async onConnect(ctx: Ctx) {
        const headers = headersOf(ctx.connectionParams);
        try {
          connections.set(ctx, { caller: await authenticate(headers), headers });
          return true;
        } catch (error) {
          const reason =
            error instanceof AuthFailure
              ? `${error.kind === 'no-upstream-key' ? 'FORBIDDEN' : 'UNAUTHENTICATED'}: ${error.message}`
              : 'AUTH_UNAVAILABLE: the identity provider could not be reached; try again';
          if (!(error instanceof AuthFailure)) logger.warn('websocket: authentication failed');
          (ctx.extra.socket as { close(code: number, reason: string): void }).close(
            4403,
            reason.slice(0, REASON_MAX),
          );
          return false;
        }
      },
      async onSubscribe(ctx: Ctx, _id, payload) {
        const connection = connections.get(ctx);
        if (!connection) return [gatewayError(ErrorCode.UNAUTHENTICATED, 'Not authenticated.')];
        let query = payload.query;
        if (trustedDocuments) {
          const id = documentIdOf(payload as never);
          const document = id === null ? undefined : trustedDocuments.get(id);
          if (!document) {
            return [
              gatewayError(
                id === null
                  ? ErrorCode.PERSISTED_QUERY_ID_REQUIRED
                  : ErrorCode.PERSISTED_QUERY_NOT_IN_LIST,
                'This gateway runs only its trusted documents (TRUSTED_DOCUMENTS): send the id of a listed operation in extensions.persistedQuery.sha256Hash, documentId or doc_id.',
              ),
            ];
          }
          query = document;
        }
        const request = new Request('http://gateway.internal/graphql', {
          method: 'POST',
          headers: connection.headers,
        });
        const enveloped = app.getEnveloped({
          request,
          caller: connection.caller,
          params: { ...payload, query },
        });
        let document;
        try {
          document = enveloped.parse(query ?? '');
        } catch (error) {
          return [error as GraphQLError];
        }
        const errors = enveloped.validate(enveloped.schema, document);
        if (errors.length > 0) return errors;
        const args: ExecutionArgs = {
          schema: enveloped.schema,
          operationName: payload.operationName,
          document,
          variableValues: payload.variables,
          contextValue: await enveloped.contextFactory(),
          rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
        };
        active += 1;
        return args;
      },
      onComplete() {
        active -= 1;
      },
    },
    wss,
  );

  return {
    async close() {
      const deadline = Date.now() + COMPLETE_WAIT_MS;
      while (active > 0 && Date.now() < deadline) await sleep(10);
      for (const socket of wss.clients) socket.close(1001, 'Going away: the server shuts down');
      await disposable.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/** What the recipe passes as `rootValue`: the app's enveloped execute and subscribe. */
interface Enveloped {
  execute(args: ExecutionArgs): ReturnType<NonNullable<Parameters<typeof useServer>[0]['execute']>>;
  subscribe(
    args: ExecutionArgs,
  ): ReturnType<NonNullable<Parameters<typeof useServer>[0]['subscribe']>>;
}
