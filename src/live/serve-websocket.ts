import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ExecutionArgs, ExecutionResult, GraphQLError } from 'graphql';
import type { Context as WsContext } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { GraphQLParams } from 'graphql-yoga';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Admission } from '../admission/admission.js';
import { closeCodeOf } from '../admission/caller-refusal.js';
import type { Booking, DoorContext } from '../admission/door-context.js';
import { codesOf, outcomeOf, requestIdOf } from '../admission/operation-report.js';
import type { ConnectionCount } from '../admission/subscription-counts.js';
import type { App } from '../app.js';
import type { Caller } from '../auth/create-authenticator.js';
import { NOTHING_SPENT } from '../credits/credit-extensions.js';
import { ErrorCode, gatewayError } from '../errors.js';
import type { Logger } from '../logging/create-logger.js';
import { atTime } from './at-time.js';

/** Options of {@link serveWebSocket}. */
export interface WebSocketOptions {
  /** The GraphQL app whose plugins, schema and context every operation goes through. */
  app: App;
  /** The rules every door passes. */
  admission: Admission;
  logger: Logger;
  /** The path upgrades are accepted on. */
  path: string;
}

/** A served WebSocket endpoint. */
export interface ServedWebSocket {
  /** Closes every socket (`1001 Going away`), after their subscriptions completed. */
  close(): Promise<void>;
}

/** A connection as its `connection_init` admitted it: its caller, its headers, its count. */
interface Connection {
  caller: Caller;
  headers: Headers;
  count: ConnectionCount;
  /** Cancels the close at its caller's expiry. */
  expiry?: () => void;
  /** Its caller's token has expired: the socket closes with this once its operations completed. */
  expired?: GraphQLError;
}

/** What graphql-ws keeps per socket (`ctx.extra`): the socket, and its admitted connection. */
interface Extra {
  socket: WebSocket;
  connection?: Connection;
  /** Each operation's booking, by its id, until it completes. */
  bookings?: Map<string, Booking>;
}

/**
 * At shutdown, and at a token's expiry, how long the operations' `complete` messages may take to
 * go out before the socket closes anyway.
 */
const COMPLETE_WAIT_MS = 1_000;

/** The `code` of the error `ws` reports for a message over `maxPayload` (it closes with 1009). */
const OVERSIZED = 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH';

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

/** Closes `socket` with the code and reason of a caller's refusal. */
function closeFor(socket: WebSocket, refusal: GraphQLError): void {
  const reason = `${String(refusal.extensions['code'])}: ${refusal.message}`;
  socket.close(closeCodeOf(refusal), reason.slice(0, REASON_MAX));
}

/**
 * GraphQL over WebSocket (the `graphql-transport-ws` protocol, the `graphql-ws` library on `ws`)
 * on `server` at `path`, beside the HTTP endpoint on the same path: a door like the others, an
 * adapter over the admission. Messages are bounded by `MAX_REQUEST_BYTES` before they are parsed
 * (a larger one closes the socket, 1009). `connection_init` is admitted as an HTTP request's
 * headers are (`Admission.caller`; a refusal closes the socket: 4401, 4403, or 4503 when the
 * identity provider could not be reached), and the caller holds for as long as its token does:
 * at its expiry its subscriptions end with UNAUTHENTICATED and the socket closes with 4401; an
 * operation sent after it is refused. Each operation's document is the admission's (trusted
 * documents, APQ); it then runs through the app's own parse, validation, plugins and context
 * (limits, budget, quota, credits), as the graphql-ws recipe of Yoga does, and is reported as
 * every operation is (a subscription when it ends).
 */
export function serveWebSocket(server: Server, options: WebSocketOptions): ServedWebSocket {
  const { app, admission, logger, path } = options;
  const wss = new WebSocketServer({ server, path, maxPayload: admission.maxMessageBytes });
  // A message over the bound is refused by `ws` itself (1009) and reported as the socket's
  // error, which graphql-ws would print to the console with its stack, once per such message:
  // a refusal of the client's, not the server's fault, so it goes unprinted. Registered before
  // graphql-ws's own listener, it filters what that listener hears.
  wss.on('connection', (socket: WebSocket) => {
    const once = socket.once.bind(socket);
    socket.once = ((event: string, listener: (...args: unknown[]) => void) =>
      once(
        event,
        event === 'error'
          ? (error: unknown) => {
              if ((error as { code?: string }).code !== OVERSIZED) {
                listener(error);
              }
            }
          : listener,
      )) as WebSocket['once'];
  });
  // Operations under way: shutdown lets their `complete` messages go out before closing sockets.
  let active = 0;
  type Ctx = WsContext<Record<string, unknown> | undefined, Extra>;

  /** Reports an operation that ended with `result` (a query, or a subscription refused). */
  const report = (booking: Booking, result: ExecutionResult) => {
    admission.report({
      requestId: booking.requestId,
      endpoint: booking.endpoint,
      door: 'websocket',
      operation: booking.operation,
      type: booking.type,
      status: null,
      ms: performance.now() - booking.started,
      outcome: outcomeOf(result),
      codes: codesOf(result.errors),
      credits: booking.credits ?? NOTHING_SPENT,
    });
  };

  const disposable = useServer(
    {
      execute: (args) => (args.rootValue as Enveloped).execute(args),
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args),
      async onConnect(ctx: Ctx) {
        const headers = headersOf(ctx.connectionParams);
        const caller = await admission.caller(headers);
        const { socket } = ctx.extra;
        if (caller instanceof Error) {
          if (caller.extensions['code'] === ErrorCode.AUTH_UNAVAILABLE) {
            logger.warn('websocket: the identity provider could not be reached');
          }
          closeFor(socket, caller);
          return false;
        }
        const connection: Connection = { caller, headers, count: { open: 0 } };
        ctx.extra.connection = connection;
        if (Number.isFinite(caller.validUntil)) {
          connection.expiry = atTime(caller.validUntil, () => {
            const refusal = admission.expired(caller);
            if (!refusal) return;
            // Its subscriptions end at this moment with the refusal (`live/`). The socket closes
            // right after the last operation's `complete` went out (`onComplete`), before a lazy
            // client closes it on its own with 1000; at once when none is open; and after
            // COMPLETE_WAIT_MS whatever is left.
            connection.expired = refusal;
            if (!ctx.extra.bookings?.size) return closeFor(socket, refusal);
            setTimeout(() => closeFor(socket, refusal), COMPLETE_WAIT_MS).unref();
          });
        }
        return true;
      },
      onClose(ctx: Ctx) {
        ctx.extra.connection?.expiry?.();
      },
      async onSubscribe(ctx: Ctx, id, payload) {
        const connection = ctx.extra.connection;
        if (!connection) return [gatewayError(ErrorCode.UNAUTHENTICATED, 'Not authenticated.')];
        const booking: Booking = {
          requestId: requestIdOf(undefined),
          started: performance.now(),
          endpoint: path,
          door: 'websocket',
          operation: payload.operationName ?? null,
          type: null,
        };
        const refuse = (errors: readonly GraphQLError[]) => {
          report(booking, { errors });
          return errors;
        };
        const expired = admission.expired(connection.caller);
        if (expired) {
          setImmediate(() => closeFor(ctx.extra.socket, expired));
          return refuse([expired]);
        }
        let params: GraphQLParams;
        try {
          params = admission.documents.resolve(payload as GraphQLParams);
        } catch (error) {
          return refuse([error as GraphQLError]);
        }
        const request = new Request(`http://gateway.internal${path}`, {
          method: 'POST',
          headers: connection.headers,
        });
        const door: DoorContext = {
          caller: connection.caller,
          connection: connection.count,
          booking,
        };
        const enveloped = app.getEnveloped({ ...door, request, params });
        let document;
        try {
          document = enveloped.parse(params.query ?? '');
        } catch (error) {
          return refuse([error as GraphQLError]);
        }
        const errors = enveloped.validate(enveloped.schema, document);
        if (errors.length > 0) return refuse(errors);
        const args: ExecutionArgs = {
          schema: enveloped.schema,
          operationName: params.operationName,
          document,
          variableValues: params.variables,
          contextValue: await enveloped.contextFactory(),
          rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
        };
        (ctx.extra.bookings ??= new Map()).set(id, booking);
        active += 1;
        return args;
      },
      onOperation(ctx: Ctx, id, _payload, _args, operated) {
        // graphql-ws hands the result awaited.
        const result = operated as ExecutionResult | AsyncIterable<ExecutionResult>;
        const booking = ctx.extra.bookings?.get(id);
        // A subscription's stream reports itself when it ends (`live/live-subscription.ts`).
        if (booking && !(Symbol.asyncIterator in result)) report(booking, result);
      },
      onComplete(ctx: Ctx, id) {
        const { bookings, connection, socket } = ctx.extra;
        if (!bookings?.delete(id)) return;
        active -= 1;
        const refusal = connection?.expired;
        // graphql-ws sends this operation's `complete` right after this hook: the close follows it.
        if (refusal && bookings.size === 0) setImmediate(() => closeFor(socket, refusal));
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
