import { Admission } from './admission/admission.js';
import { createApp, type App } from './app.js';
import type { RunListener } from './answers/serve-known-answers.js';
import { createAuthenticator } from './auth/create-authenticator.js';
import type { Quotas } from './credits/quota-account.js';
import { PollerRegistry } from './live/poller-registry.js';
import { RedisLeases } from './live/redis-leases.js';
import { RedisLink } from './redis/redis-link.js';
import type { LiveDeps } from './live/live-deps.js';
import { operationLog } from './logging/operation-log.js';
import { schema } from './schema/index.js';
import { createAlerts, type AlertsPart } from './alerts/create-alerts.js';
import { NoSqlite } from './alerts/open-sqlite.js';
import { createEstimator } from './estimate/estimate-operation.js';
import { sharedRedisUrl, type Config } from './config.js';
import { silentLogger, type Logger } from './logging/create-logger.js';
import { upstreamLog } from './logging/upstream-log.js';
import { joinClusterMetrics } from './metrics/cluster-metrics.js';
import { GatewayMetrics } from './metrics/gateway-metrics.js';
import { createUpstream, type Upstream, type UpstreamOptions } from './upstream/create-upstream.js';
import { throttled, type PageCacheOptions } from './upstream/page-cache/create-page-store.js';
import { createQuotaStore } from './credits/quota/create-quota-store.js';
import type { QuotaObserver } from './credits/quota/quota-store.js';
import { observeAll } from './upstream/upstream-observer.js';
import { loadTracer } from './tracing/load-tracer.js';

/** How long the gateway waits for Redis at boot before it starts without the shared cache. */
const REDIS_CONNECT_MS = 3_000;

/** What {@link createGateway} takes besides the settings: what main.ts decided, and test parts. */
export interface GatewayParts {
  /** The service's base URL (`UPSTREAM_URL`, or the sandbox main.ts started). */
  upstreamUrl: string;
  /** Where logs go; absent, nowhere. */
  logger?: Logger;
  /** A key to prefill in GraphiQL (the sandbox's public demo key), if any. */
  graphiqlApiKey?: string;
  /** This process is a worker of a cluster (`WORKERS` > 1): the primary sums `/metrics`. */
  clusterWorker?: boolean;
  /** Collect Node's process metrics (CPU, memory, event loop); default true. */
  processMetrics?: boolean;
  /**
   * Upstream options over those the settings give (tests: a dispatcher); the cache's, one by one
   * over the settings' (a tiny bound, the link to Redis kept).
   */
  upstream?: Partial<UpstreamOptions>;
}

/** A composed gateway: nothing listens yet. */
export interface Gateway {
  /** The fetch handler: `gateway.app.fetch(request)`; its WebSocket operations run here too. */
  readonly app: App;
  /** What `createServer` serves: `app` behind the kept answers of repeat views. */
  readonly listener: RunListener;
  /** The subgraph's handler, when `SUBGRAPH_PORT` serves it apart from `app`. */
  readonly subgraphApp: App | undefined;
  readonly upstream: Upstream;
  /** The metrics, unless `METRICS=off`. */
  readonly metrics: GatewayMetrics | undefined;
  /** The text of `/metrics` (in a cluster, every worker's); absent with `METRICS=off`. */
  readonly scrape: (() => Promise<string>) | undefined;
  /** The rules every door passes: the WebSocket server's too. */
  readonly admission: Admission;
  /** What subscriptions share: the pollers and the open feeds. */
  readonly live: LiveDeps;
  /**
   * From now on `/readyz` answers 503, responses say `Connection: close`, and every subscription
   * completes.
   */
  beginShutdown(): void;
  /** Closes the upstream pool and the shared cache, flushes the traces, stops the log's timers. */
  close(): Promise<void>;
}

/**
 * Whether `/metrics` is served on `PORT`: asked for (`METRICS=public`), or `on` without a
 * `METRICS_PORT` while the gateway serves the sandbox. With `UPSTREAM_URL` set they show every
 * workspace's operation names and credit volumes to anyone, so they stay off the public port.
 */
export function metricsOnPublicPort(config: Config): boolean {
  if (config.metrics === 'public') return true;
  return config.metrics === 'on' && config.metricsPort === null && config.upstreamUrl === null;
}

/** The upstream pipeline's options from the settings: the one place that maps them. */
export function upstreamOptions(
  config: Config,
  baseUrl: string,
  link?: RedisLink,
): UpstreamOptions & { cache: PageCacheOptions } {
  return {
    baseUrl,
    timeoutMs: config.upstreamTimeoutMs,
    connections: config.upstreamConnections,
    retry: { retries: config.upstreamRetries, retryAfterMaxMs: config.retryAfterMaxMs },
    breaker: { failureThreshold: config.breakerFailures, openMs: config.breakerOpenMs },
    cache: {
      ttlMs: config.cacheTtlSeconds * 1000,
      staleMs: config.cacheStaleSeconds * 1000,
      maxBytes: config.cacheMaxMb * 1024 * 1024,
      link,
      secret: config.cursorSecret,
    },
  };
}

/**
 * The credit quotas' store (in `redisUrl`, shared, else in memory) and observer: the metrics, and
 * a warning at most every 30 s while Redis fails and this instance reserves on its own (from the
 * levels it last heard, carried to Redis once it answers), or drops settlements kept for it.
 */
function quotaOptions(
  config: Config,
  upstreamUrl: string,
  link: RedisLink | undefined,
  logger: Logger,
  metrics: GatewayMetrics | undefined,
): Quotas {
  const warn = throttled((message) => logger.warn(message));
  const warnDropped = throttled((message) => logger.warn(message));
  const observer: QuotaObserver = {
    fellBack(reason) {
      metrics?.quota.fellBack();
      warn(
        `credit quotas: Redis failed (${reason}); this instance reserves on its own, from the levels it last heard, and carries what it takes to Redis once it answers`,
      );
    },
    refused: () => metrics?.quota.refused(),
    reserved: (credits) => metrics?.quota.reserved(credits),
    refunded: (credits) => metrics?.quota.refunded(credits),
    dropped(settlements) {
      warnDropped(
        `credit quotas: Redis has been away too long; dropped ${settlements} settlement(s) kept for it (their refunds are lost: those buckets refill with time)`,
      );
    },
  };
  const store = createQuotaStore({
    link,
    secret: config.cursorSecret,
    upstream: upstreamUrl,
    observer,
  });
  return { store, observer };
}

/**
 * What subscriptions share: one poller per (workspace, event list, filters) on this instance,
 * polling every `POLL_INTERVAL_SECONDS`, each poll bounded by `OPERATION_TIMEOUT_MS`; its events
 * counted in the metrics, its faults logged (never the key).
 */
function liveDeps(
  config: Config,
  upstream: Upstream,
  logger: Logger,
  metrics: GatewayMetrics | undefined,
  shuttingDown: () => boolean,
  leases: RedisLeases | undefined,
): LiveDeps {
  const warn = throttled((message) => logger.warn(message));
  const warnRefused = throttled((message) => logger.warn(message));
  const registry = new PollerRegistry({
    leases,
    shared: upstream.shared,
    intervalMs: config.pollIntervalSeconds * 1000,
    pollTimeoutMs: config.operationTimeoutMs,
    maxPollersPerKey: config.maxPollersPerKey,
    pollRequestsPerSecond: config.pollRequestsPerSecond,
    events: {
      changed: (pollers, subscribers) => metrics?.live.changed?.(pollers, subscribers),
      polled: (endpoint, records, fresh, credits) =>
        metrics?.live.polled?.(endpoint, records, fresh, credits),
      failed(endpoint, error, delayMs) {
        metrics?.live.failed?.(endpoint, error, delayMs);
        const code = (error as { code?: string }).code ?? 'UNEXPECTED';
        warn(
          `subscriptions: a poll of ${endpoint} failed (${code}); next in ${Math.round(delayMs / 1000)} s`,
        );
      },
      refused(endpoint, limit) {
        warnRefused(
          `subscriptions: refused a subscription to ${endpoint}: its API key has ${limit} pollers (MAX_POLLERS_PER_KEY)`,
        );
      },
    },
  });
  return { registry, feeds: new Set(), shuttingDown };
}

/**
 * The composition root: the upstream pipeline with its observers (metrics, the upstream log),
 * the metrics, the tracer (only with `OTEL_TRACES_EXPORTER=otlp`) and the app, from the settings. `main.ts` (through `serveGateway`), every test
 * helper and the bench build the gateway here, so that what is tested is what runs.
 */
export async function createGateway(config: Config, parts: GatewayParts): Promise<Gateway> {
  const logger = parts.logger ?? silentLogger();
  const metrics =
    config.metrics !== 'off'
      ? new GatewayMetrics({
          processMetrics: parts.processMetrics ?? true,
          cacheBytes: () => upstream.cacheBytes(),
          queued: () => upstream.queued(),
        })
      : undefined;
  const log = upstreamLog(logger);
  const redisUrl = sharedRedisUrl(config);
  const link = redisUrl
    ? new RedisLink({
        url: redisUrl,
        onChange(state, reason) {
          metrics?.redis(state);
          if (state === 'down') {
            logger.warn(
              `shared Redis: not asked until it answers again (${reason}); pages, answers, quotas and pollers are this instance's own meanwhile`,
            );
          } else {
            logger.info('shared Redis: answering again; shared state is back in Redis');
          }
        },
      })
    : undefined;
  const settings = upstreamOptions(config, parts.upstreamUrl, link);
  const { cache: cacheParts, ...upstreamParts } = parts.upstream ?? {};
  const upstream = createUpstream({
    ...settings,
    observer: metrics ? observeAll(metrics.upstream, log.observer) : log.observer,
    ...upstreamParts,
    cache: { ...settings.cache, onError: (message) => logger.warn(message), ...cacheParts },
  });
  if (link) {
    await link.ready(REDIS_CONNECT_MS);
    if (link.up) metrics?.redis('up', { changed: false });
    logger.info(`page cache: shared, in Redis (${config.redisUrl ? 'REDIS_URL' : 'CACHE_URL'})`);
  }
  const quotas =
    config.creditQuota || config.jwtQuotaClaim
      ? quotaOptions(config, parts.upstreamUrl, link, logger, metrics)
      : undefined;

  const tracer = await loadTracer(config, { upstreamUrl: parts.upstreamUrl, logger });

  const scrape = metrics
    ? parts.clusterWorker
      ? joinClusterMetrics(metrics.registry)
      : () => metrics.scrape()
    : undefined;
  const logOperation = operationLog(logger);
  const admission = new Admission({
    config,
    authenticate: createAuthenticator(config),
    quotas,
    schema,
    report: (report) => {
      metrics?.operation(report);
      logOperation(report);
    },
  });
  let shuttingDown = false;
  const leases = link
    ? new RedisLeases({
        link,
        upstream: parts.upstreamUrl,
        secret: config.cursorSecret,
        onError: throttled((message) => logger.warn(message)),
      })
    : undefined;
  await leases?.ready(REDIS_CONNECT_MS);
  const live = liveDeps(config, upstream, logger, metrics, () => shuttingDown, leases);
  let alerts: AlertsPart | undefined;
  try {
    alerts =
      config.alerts === 'on'
        ? await createAlerts(config, {
            // REDIS_URL only: CACHE_URL names a Redis for the page cache alone.
            link: config.redisUrl ? link : undefined,
            upstream: parts.upstreamUrl,
            clusterWorker: parts.clusterWorker,
            admission,
            estimate: createEstimator(schema, {
              defaultPageSize: config.defaultPageSize,
              maxPageSize: config.maxPageSize,
              secret: config.cursorSecret,
            }),
            logger,
            events: metrics?.alerts,
          })
        : undefined;
  } catch (error) {
    if (!(error instanceof NoSqlite)) throw error;
    // The gateway serves all else; the alert operations answer that alerts are not served.
    logger.warn(error.message);
  }
  if (alerts) metrics?.alertQueue(() => alerts.depth());
  const {
    app,
    listener,
    subgraph: subgraphApp,
  } = createApp(config, {
    upstream,
    admission,
    graphiqlApiKey: parts.graphiqlApiKey,
    shuttingDown: () => shuttingDown,
    logger,
    scrapeMetrics: metricsOnPublicPort(config) ? scrape : undefined,
    tracer,
    live,
    alerts: alerts?.alerts,
    redisState: link && (() => link.state),
  });
  alerts?.start(app);
  return {
    app,
    listener,
    subgraphApp,
    upstream,
    metrics,
    scrape,
    admission,
    live,
    beginShutdown() {
      shuttingDown = true;
      // Every subscription completes now (a `complete` message, the SSE stream closed), so that
      // its connection does not hold the server open until the grace period ends.
      for (const feed of [...live.feeds]) feed.close();
      live.registry.close();
    },
    async close() {
      live.registry.close();
      log.close();
      await alerts?.close();
      await Promise.all([
        upstream.close(),
        quotas?.store.close(),
        leases?.close(),
        tracer?.shutdown(),
      ]);
      await link?.close();
    },
  };
}
