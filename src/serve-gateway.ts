import { createServer, type Server } from 'node:http';
import type { Config } from './config.js';
import { createGateway, type Gateway, type GatewayParts } from './create-gateway.js';
import { serveMetrics } from './metrics/serve-metrics.js';
import { serveWebSocket } from './live/serve-websocket.js';
import { silentLogger } from './logging/create-logger.js';
import { GRAPHQL_PATH } from './app.js';

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

/** While shutting down, how often connections that became idle are closed. */
const IDLE_CHECK_MS = 50;

/** How often the server looks for requests past their timeouts (Node's default is 30 s). */
const TIMEOUT_CHECK_MS = 1_000;

/**
 * An HTTP server for `handler` with the settings' bounds: a whole request within
 * `REQUEST_TIMEOUT_MS` (a body trickled a byte at a time is cut there, with 408), its headers
 * within `HEADERS_TIMEOUT_MS`, at most `MAX_CONNECTIONS` connections.
 */
function listenerFor(handler: Parameters<typeof createServer>[1], config: Config): Server {
  const server = createServer(
    {
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    },
    handler,
  );
  server.keepAliveTimeout = 65_000;
  server.maxConnections = config.maxConnections;
  return server;
}

/** Resolves with `server` once it listens on `port`; rejects if it cannot (the port is taken). */
function listen(server: Server, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/**
 * Runs one gateway process: the gateway {@link createGateway} composes, served on `PORT`,
 * `/subgraph` on `SUBGRAPH_PORT` when set, and `/metrics` on `METRICS_PORT` when set (unless the
 * cluster's primary serves that).
 */
export async function serveGateway(config: Config, parts: GatewayParts): Promise<ServingGateway> {
  const gateway = await createGateway(config, parts);
  const metricsServer =
    gateway.scrape && config.metricsPort !== null && !parts.clusterWorker
      ? await serveMetrics(config.metricsPort, config.host, gateway.scrape)
      : undefined;
  const server = listenerFor(gateway.listener, config);
  // Subscriptions over WebSocket (graphql-transport-ws) on the same path as HTTP's /graphql.
  const webSocket = serveWebSocket(server, {
    app: gateway.app,
    admission: gateway.admission,
    logger: parts.logger ?? silentLogger(),
    path: GRAPHQL_PATH,
  });
  await listen(server, config.port, config.host);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const subgraphServer =
    gateway.subgraphApp && config.subgraphPort !== null
      ? await listen(listenerFor(gateway.subgraphApp, config), config.subgraphPort, config.host)
      : undefined;

  let closing: Promise<void> | undefined;
  return {
    gateway,
    server,
    port,
    shutdown() {
      closing ??= (async () => {
        // Subscriptions complete first (SSE streams end, WebSocket `complete` messages go out).
        gateway.beginShutdown();
        const servers = subgraphServer ? [server, subgraphServer] : [server];
        const closed = Promise.all(
          servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
        );
        for (const s of servers) s.closeIdleConnections();
        // A connection whose response ends later (a completed SSE stream, an operation in
        // flight) is closed once idle, not left to the grace period.
        const idle = setInterval(() => {
          for (const s of servers) s.closeIdleConnections();
        }, IDLE_CHECK_MS);
        idle.unref();
        const grace = setTimeout(() => {
          for (const s of servers) s.closeAllConnections();
        }, config.shutdownGraceMs);
        grace.unref();
        await webSocket.close();
        await closed;
        clearInterval(idle);
        clearTimeout(grace);
        metricsServer?.close();
        await gateway.close();
      })();
      return closing;
    },
  };
}
