import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import WebSocket from 'ws';

/** One payload a subscription received. */
export interface Payload {
  data?: Record<string, any> | null;
  errors?: { message: string; extensions?: Record<string, any> }[];
  extensions?: Record<string, any>;
}

/** A subscription a test holds: what arrived so far, and how it ended. */
export interface Subscribed {
  readonly payloads: Payload[];
  /** Resolves when the subscription completes or fails (with the error, if any). */
  readonly ended: Promise<unknown>;
  /** Resolves once `count` payloads arrived (rejects after `timeoutMs`). */
  next(count: number, timeoutMs?: number): Promise<Payload[]>;
  /** Leaves (the client unsubscribes). */
  leave(): void;
}

type Sink = Parameters<ReturnType<typeof createSseClient>['subscribe']>[1];

function holder(start: (sink: Sink) => () => void): Subscribed {
  const payloads: Payload[] = [];
  const waiters: (() => void)[] = [];
  let finish!: (error?: unknown) => void;
  const ended = new Promise<unknown>((resolve) => (finish = resolve));
  const leave = start({
    next: (value) => {
      payloads.push(value as Payload);
      for (const wake of waiters.splice(0)) wake();
    },
    error: (error) => {
      finish(error);
      for (const wake of waiters.splice(0)) wake();
    },
    complete: () => {
      finish(undefined);
      for (const wake of waiters.splice(0)) wake();
    },
  });
  return {
    payloads,
    ended,
    leave,
    async next(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (payloads.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new Error(`${payloads.length} payloads within ${timeoutMs} ms, not ${count}`);
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return payloads.slice(0, count);
    },
  };
}

/** Subscribes over GraphQL over SSE (graphql-sse, distinct connections mode) with `headers`. */
export function subscribeSse(
  url: string,
  query: string,
  headers: Record<string, string>,
  variables?: Record<string, unknown>,
): Subscribed {
  const client = createSseClient({ url, headers, retryAttempts: 0 });
  return holder((sink) => {
    const stop = client.subscribe({ query, variables }, sink);
    return () => {
      stop();
      client.dispose();
    };
  });
}

/** A graphql-ws client whose `connection_init` carries `params` (header names as keys). */
export function wsClient(url: string, params: Record<string, string>): WsClient {
  return createWsClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: params,
    retryAttempts: 0,
    lazy: true,
  });
}

/** Subscribes over WebSocket (graphql-transport-ws) through `client`. */
export function subscribeWs(
  client: WsClient,
  query: string,
  variables?: Record<string, unknown>,
): Subscribed {
  return holder((sink) => client.subscribe({ query, variables }, sink));
}

/** Waits until `check` holds (polled every 50 ms), or fails after `timeoutMs`. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'the condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
