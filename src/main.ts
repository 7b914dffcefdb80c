import { createServer } from 'node:http';
import { createApp } from './app.js';
import { loadConfig } from './config.js';
import { startSandbox } from './sandbox/index.js';
import { createUpstream } from './upstream/create-upstream.js';

/** How long the gateway waits for Redis at boot before it starts without the shared cache. */
const REDIS_CONNECT_MS = 3_000;

/** How often the retries of the last interval are logged, by reason. */
const RETRY_REPORT_MS = 10_000;

/** Boots the gateway: the only module with side effects. */
async function main() {
  const config = loadConfig();
  let upstreamUrl: string;
  let sandbox: Awaited<ReturnType<typeof startSandbox>> | undefined;
  if (config.upstreamUrl) {
    upstreamUrl = config.upstreamUrl;
  } else {
    sandbox = await startSandbox({ port: config.sandboxPort, quiet: true });
    upstreamUrl = sandbox.url;
    console.log(`UPSTREAM_URL is not set: serving the local sandbox at ${sandbox.url}`);
    console.log(`Sandbox demo key (public, local only): ${sandbox.keys.demo}`);
  }
  const retries = new Map<string, number>();
  const upstream = createUpstream({
    baseUrl: upstreamUrl,
    timeoutMs: config.upstreamTimeoutMs,
    connections: config.upstreamConnections,
    retry: { retries: config.upstreamRetries, retryAfterMaxMs: config.retryAfterMaxMs },
    breaker: { failureThreshold: config.breakerFailures, openMs: config.breakerOpenMs },
    onRetry: (reason) => retries.set(reason, (retries.get(reason) ?? 0) + 1),
    cache: {
      ttlMs: config.cacheTtlSeconds * 1000,
      maxBytes: config.cacheMaxMb * 1024 * 1024,
      url: config.cacheUrl,
    },
  });
  if (config.cacheUrl) {
    await upstream.ready(REDIS_CONNECT_MS);
    console.log('Page cache: shared, in Redis (CACHE_URL)');
  }
  let shuttingDown = false;
  const app = createApp(config, {
    upstream,
    graphiqlApiKey: sandbox?.keys.demo,
    shuttingDown: () => shuttingDown,
  });
  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  console.log(`GraphQL gateway on http://localhost:${port}/graphql (GraphiQL in a browser)`);
  upstream.onBreakerChange((state) => console.warn(`upstream circuit breaker: ${state}`));
  // Retries come in bursts when the service falters: one line per interval, with their reasons.
  const retryReport = setInterval(() => {
    if (retries.size === 0) return;
    const reasons = [...retries].map(([reason, count]) => `${reason} ${count}`).join(', ');
    console.warn(`upstream retries in the last ${RETRY_REPORT_MS / 1000} s: ${reasons}`);
    retries.clear();
  }, RETRY_REPORT_MS);
  retryReport.unref();

  /**
   * Graceful shutdown: stop accepting, close idle connections at once, let the operations in
   * flight finish (their responses say `Connection: close`, so no kept-alive client holds the
   * process), and after SHUTDOWN_GRACE_MS close what is left. Then the upstream pool, and exit 0.
   */
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    console.log(`${signal}: draining, up to ${config.shutdownGraceMs} ms`);
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const grace = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
    grace.unref();
    await closed;
    clearTimeout(grace);
    await upstream.close();
    await sandbox?.close();
    console.log(`${signal}: closed`);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
