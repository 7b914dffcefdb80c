import type { Plugin } from 'graphql-yoga';
import type { RedisState } from '../redis/redis-link.js';
import type { BreakerState } from '../upstream/circuit-breaker.js';

/** What the health endpoints read. */
export interface HealthSources {
  /** True once the process has begun to shut down (SIGTERM or SIGINT). */
  shuttingDown(): boolean;
  /** The upstream circuit breaker's state. */
  breakerState(): BreakerState;
  /** The shared Redis's state (`REDIS_URL`), if there is one. */
  redisState?: () => RedisState;
}

function json(status: number, body: object): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  });
}

/**
 * `GET /healthz`: the process is up (200 `{"status":"ok"}`), with the upstream breaker's state.
 * `GET /readyz`: this instance can serve: 200 `{"status":"ready"}` unless it is shutting down
 * (503, with the reason). An open breaker does not make it unready: every instance shares the one
 * service, so a load balancer would take them all out together, and cached pages and errors that
 * say when to come back are still better than no answer; the breaker shows in both bodies and in
 * the metrics. Neither does a shared Redis that is down (`redis: "down"` in both bodies): each
 * instance then serves from its own state. Once shutdown has begun, every response also says `Connection: close`, so that a
 * kept-alive client does not hold the process open past its grace period.
 */
export function useHealth(sources: HealthSources): Plugin {
  return {
    onRequest({ url, endResponse }) {
      const path = url.pathname;
      if (path !== '/healthz' && path !== '/readyz') return;
      const shared = {
        breaker: sources.breakerState(),
        ...(sources.redisState ? { redis: sources.redisState() } : {}),
      };
      if (path === '/healthz') {
        endResponse(json(200, { status: 'ok', ...shared }));
        return;
      }
      const reason = sources.shuttingDown() ? 'shutting down' : null;
      endResponse(
        reason
          ? json(503, { status: 'not ready', reason, ...shared })
          : json(200, { status: 'ready', ...shared }),
      );
    },
    onResponse({ response }) {
      if (sources.shuttingDown()) response.headers.set('connection', 'close');
    },
  };
}
