import type { Plugin } from 'graphql-yoga';
import type { BreakerState } from '../upstream/circuit-breaker.js';

/** What the health endpoints read. */
export interface HealthSources {
  /** True once the process has begun to shut down (SIGTERM or SIGINT). */
  shuttingDown(): boolean;
  /** The upstream circuit breaker's state. */
  breakerState(): BreakerState;
}

function json(status: number, body: object): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  });
}

/**
 * `GET /healthz`: the process is up (200 `{"status":"ok"}`). `GET /readyz`: it should get traffic:
 * 200 `{"status":"ready"}` unless it is shutting down or the breaker is open (503, with the
 * reason), so that a load balancer sends requests to another instance meanwhile. Both carry the
 * breaker's state. Once shutdown has begun, every response also says `Connection: close`, so that
 * a kept-alive client does not hold the process open past its grace period.
 */
export function useHealth(sources: HealthSources): Plugin {
  return {
    onRequest({ url, endResponse }) {
      const path = url.pathname;
      if (path !== '/healthz' && path !== '/readyz') return;
      const breaker = sources.breakerState();
      if (path === '/healthz') {
        endResponse(json(200, { status: 'ok', breaker }));
        return;
      }
      const reason = sources.shuttingDown()
        ? 'shutting down'
        : breaker === 'open'
          ? 'the upstream circuit breaker is open'
          : null;
      endResponse(
        reason
          ? json(503, { status: 'not ready', reason, breaker })
          : json(200, { status: 'ready', breaker }),
      );
    },
    onResponse({ response }) {
      if (sources.shuttingDown()) response.headers.set('connection', 'close');
    },
  };
}
