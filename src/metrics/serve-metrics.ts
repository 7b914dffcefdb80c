import { createServer, type Server } from 'node:http';

/** The media type of Prometheus's text exposition format. */
export const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * A server of its own for `GET /metrics` (`METRICS_PORT`), so that the metrics stay off the public
 * port; every other path is 404. Resolves once it listens.
 */
export async function serveMetrics(
  port: number,
  host: string,
  scrape: () => Promise<string>,
): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    scrape().then(
      (text) =>
        response
          .writeHead(200, { 'content-type': PROMETHEUS_TEXT, 'cache-control': 'no-store' })
          .end(text),
      () => response.writeHead(503, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return server;
}
