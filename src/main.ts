import cluster from 'node:cluster';
import { loadConfig } from './config.js';
import { exitAfterShutdown } from './exit-after-shutdown.js';
import { createLogger } from './logging/create-logger.js';
import { runCluster, WORKER_ENV } from './run-cluster.js';
import type { startSandbox } from './sandbox/index.js';
import { serveGateway } from './serve-gateway.js';

/**
 * Boots the gateway: the only module with side effects. One process serves (`WORKERS=1`), or a
 * primary runs the sandbox (when `UPSTREAM_URL` is unset) and `WORKERS` workers that serve.
 */
async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);

  if (cluster.isWorker) {
    const gateway = await serveGateway(config, {
      logger,
      upstreamUrl: process.env[WORKER_ENV.upstreamUrl] ?? '',
      graphiqlApiKey: process.env[WORKER_ENV.graphiqlApiKey],
      clusterWorker: true,
    });
    const shutdown = exitAfterShutdown(logger, config.shutdownGraceMs, () => gateway.shutdown());
    // The primary is gone (killed): no worker outlives it.
    process.on('disconnect', () => shutdown('SIGTERM'));
    return;
  }

  let upstreamUrl = config.upstreamUrl;
  let sandbox: Awaited<ReturnType<typeof startSandbox>> | undefined;
  if (!upstreamUrl) {
    // Loaded only here: a gateway with its own upstream never holds the sandbox's code and data.
    const { startSandbox: start } = await import('./sandbox/index.js');
    const trickleMs = config.sandboxTrickleSeconds * 1000;
    sandbox = await start({
      port: config.sandboxPort,
      quiet: true,
      trickle: trickleMs > 0 ? { everyMs: trickleMs } : undefined,
    });
    upstreamUrl = sandbox.url;
    logger.info(
      { sandbox: sandbox.url, trickleSeconds: config.sandboxTrickleSeconds },
      'UPSTREAM_URL is not set: serving the local sandbox',
    );
    logger.info(`sandbox demo key (public, local only): ${sandbox.keys.demo}`);
  }
  const graphiqlApiKey = sandbox?.keys.demo;

  if (config.workers > 1) {
    await runCluster(config, logger, {
      upstreamUrl,
      graphiqlApiKey,
      onExit: async () => sandbox?.close(),
    });
    logger.info(
      `GraphQL gateway on http://localhost:${config.port}/graphql (GraphiQL in a browser)`,
    );
    return;
  }

  const gateway = await serveGateway(config, { logger, upstreamUrl, graphiqlApiKey });
  logger.info(
    `GraphQL gateway on http://localhost:${gateway.port}/graphql (GraphiQL in a browser)`,
  );
  exitAfterShutdown(logger, config.shutdownGraceMs, async (signal) => {
    logger.info({ signal, graceMs: config.shutdownGraceMs }, 'draining');
    await gateway.shutdown();
    await sandbox?.close();
    logger.info({ signal }, 'closed');
  });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
