import { createServer, type Server } from 'node:http';
import { createApp } from './app.js';
import type { Config } from './config.js';
import type { Logger } from './logging/create-logger.js';
import { upstreamLog } from './logging/upstream-log.js';
import { joinClusterMetrics } from './metrics/cluster-metrics.js';
import { GatewayMetrics } from './metrics/gateway-metrics.js';
import { serveMetrics } from './metrics/serve-metrics.js';
import { createUpstream, type UpstreamOptions } from './upstream/create-upstream.js';
import { observeAll } from './upstream/upstream-observer.js';
import type { PageCacheOptions } from './upstream/page-cache/create-page-store.js';

/** How long the gateway waits for Redis at boot before it starts without the shared cache. */
const REDIS_CONNECT_MS = 3_000;

/** Where one gateway process gets what main.ts decided. */
export interface ServeOptions {
  /** The service's base URL (`UPSTREAM_URL`, or the sandbox main.ts started). */
  upstreamUrl: string;
  /** A key to prefill in GraphiQL (the sandbox's public demo key), if any. */
  graphiqlApiKey?: string;
  /** This process is a worker of a cluster (`WORKERS` > 1): the primary serves `METRICS_PORT`. */
  clusterWorker?: boolean;
}

/** A serving gateway process. */
export interface ServingGateway {
  readonly server: Server;
  /** The port it listens on (`PORT`, or the one picked for 0). */
  readonly port: number;
  /**
   * Graceful shutdown: stop accepting, close idle connections at once, let the operations in
   * flight finish (their responses say `Connection: close`, so no kept-alive client holds the
   * process), and after `SHUTDOWN_GRACE_MS` close what is left. Then the upstream pool.
   */
  shutdown(): Promise<void>;
}

/** The upstream pipeline's options from the settings: the one place that maps them. */
export function upstreamOptions(
  config: Config,
  baseUrl: string,
): UpstreamOptions & { cache: PageCacheOptions } {
  return {
    baseUrl,
    timeoutMs: config.upstreamTimeoutMs,
    connections: config.upstreamConnections,
    retry: { retries: config.upstreamRetries, retryAfterMaxMs: config.retryAfterMaxMs },
    breaker: { failureThreshold: config.breakerFailures, openMs: config.breakerOpenMs },
    cache: {
      ttlMs: config.cacheTtlSeconds * 1000,
      maxBytes: config.cacheMaxMb * 1024 * 1024,
      url: config.cacheUrl,
    },
  };
}

/**
 * Runs one gateway process: the upstream pipeline, its metrics and logs, the app on `PORT`, and
 * `/metrics` (on `PORT`, or on `METRICS_PORT` unless the cluster's primary serves that).
 */
export async function serveGateway(
  config: Config,
  logger: Logger,
  options: ServeOptions,
): Promise<ServingGateway> {
  const metrics =
    config.metrics === 'on'
      ? new GatewayMetrics({ processMetrics: true, cacheBytes: () => upstream.cacheBytes() })
      : undefined;
  const log = upstreamLog(logger);
  const settings = upstreamOptions(config, options.upstreamUrl);
  const upstream = createUpstream({
    ...settings,
    cache: { ...settings.cache, onError: (message) => logger.warn(message) },
    observer: metrics ? observeAll(metrics.upstream, log.observer) : log.observer,
  });
  if (config.cacheUrl) {
    await upstream.ready(REDIS_CONNECT_MS);
    logger.info('page cache: shared, in Redis (CACHE_URL)');
  }

  let scrape: (() => Promise<string>) | undefined;
  let metricsServer: Server | undefined;
  if (metrics) {
    scrape = options.clusterWorker ? joinClusterMetrics(metrics.registry) : () => metrics.scrape();
    if (config.metricsPort !== null && !options.clusterWorker) {
      metricsServer = await serveMetrics(config.metricsPort, config.host, scrape);
    }
  }

  let shuttingDown = false;
  const app = createApp(config, {
    upstream,
    graphiqlApiKey: options.graphiqlApiKey,
    shuttingDown: () => shuttingDown,
    logger,
    metrics,
    scrapeMetrics: config.metricsPort === null ? scrape : undefined,
    pidHeader: process.env['NODE_ENV'] === 'test',
  });
  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;

  return {
    server,
    port,
    async shutdown() {
      if (shuttingDown) return;
      shuttingDown = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
      grace.unref();
      await closed;
      clearTimeout(grace);
      metricsServer?.close();
      log.close();
      await upstream.close();
    },
  };
}
