import { createServer, type Server } from 'node:http';
import type { Config } from './config.js';
import { createGateway, type Gateway, type GatewayParts } from './create-gateway.js';
import { serveMetrics } from './metrics/serve-metrics.js';

/** A gateway listening on `PORT`. */
export interface ServingGateway {
  readonly gateway: Gateway;
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

/**
 * Runs one gateway process: the gateway {@link createGateway} composes, served on `PORT`, and
 * `/metrics` on `METRICS_PORT` when set (unless the cluster's primary serves that).
 */
export async function serveGateway(config: Config, parts: GatewayParts): Promise<ServingGateway> {
  const gateway = await createGateway(config, parts);
  const metricsServer =
    gateway.scrape && config.metricsPort !== null && !parts.clusterWorker
      ? await serveMetrics(config.metricsPort, config.host, gateway.scrape)
      : undefined;
  const server = createServer(gateway.app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;

  let closing: Promise<void> | undefined;
  return {
    gateway,
    server,
    port,
    shutdown() {
      closing ??= (async () => {
        gateway.beginShutdown();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const grace = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
        grace.unref();
        await closed;
        clearTimeout(grace);
        metricsServer?.close();
        await gateway.close();
      })();
      return closing;
    },
  };
}
