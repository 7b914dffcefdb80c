import cluster, { type Worker } from 'node:cluster';
import type { Server } from 'node:http';
import type { Config } from './config.js';
import type { Logger } from './logging/create-logger.js';
import { serveClusterMetrics } from './metrics/cluster-metrics.js';
import { serveMetrics } from './metrics/serve-metrics.js';

/** The environment variables through which the primary tells its workers what it decided. */
export const WORKER_ENV = {
  upstreamUrl: 'GATEWAY_WORKER_UPSTREAM_URL',
  graphiqlApiKey: 'GATEWAY_WORKER_GRAPHIQL_KEY',
} as const;

/** A worker that dies sooner than this after its start is replaced only after a pause. */
const QUICK_DEATH_MS = 5_000;
const RESTART_PAUSE_MS = 1_000;
/** Beyond the grace period, how long the primary waits for its workers before it exits anyway. */
const PRIMARY_FAILSAFE_MS = 10_000;

/**
 * The primary of `WORKERS` > 1: forks the workers, which share `PORT` (node:cluster hands each new
 * connection to the next worker in turn), replaces a worker that dies, and serves the cluster's
 * metrics on `METRICS_PORT` when set (every worker's, summed). On SIGTERM or SIGINT it passes the
 * signal on, waits for every worker to drain and exit, and exits 0.
 */
export async function runCluster(
  config: Config,
  logger: Logger,
  options: { upstreamUrl: string; graphiqlApiKey?: string; onExit?: () => Promise<void> },
): Promise<void> {
  const env = {
    [WORKER_ENV.upstreamUrl]: options.upstreamUrl,
    ...(options.graphiqlApiKey ? { [WORKER_ENV.graphiqlApiKey]: options.graphiqlApiKey } : {}),
  };
  let shuttingDown = false;
  const started = new Map<Worker, number>();
  const fork = () => started.set(cluster.fork(env), Date.now());

  let metricsServer: Server | undefined;
  if (config.metrics !== 'off') {
    const aggregator = serveClusterMetrics();
    if (config.metricsPort !== null) {
      metricsServer = await serveMetrics(config.metricsPort, config.host, () =>
        aggregator.clusterMetrics(),
      );
    }
  }

  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (started.get(worker) ?? 0);
    started.delete(worker);
    if (shuttingDown) {
      if (started.size === 0) void finish();
      return;
    }
    logger.warn({ worker: worker.process.pid, code, signal }, 'worker died: starting another');
    setTimeout(fork, lived < QUICK_DEATH_MS ? RESTART_PAUSE_MS : 0);
  });
  cluster.once('listening', (_worker, address) =>
    logger.info(
      { workers: config.workers },
      `GraphQL gateway on http://localhost:${address.port}/graphql (GraphiQL in a browser)`,
    ),
  );
  for (let i = 0; i < config.workers; i++) fork();

  const finish = async () => {
    metricsServer?.close();
    await options.onExit?.();
    logger.info('cluster closed');
    process.exit(0);
  };
  const shutdown = (signal: NodeJS.Signals) => {
    if (shuttingDown) return;
    shuttingDown = true;
    // Workers exit within their grace period; a primary waiting on a hung one still exits.
    setTimeout(() => process.exit(1), config.shutdownGraceMs + PRIMARY_FAILSAFE_MS).unref();
    logger.info({ signal }, 'draining the workers');
    if (started.size === 0) void finish();
    for (const worker of started.keys()) worker.process.kill(signal);
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
