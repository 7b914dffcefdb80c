import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST a receiver got. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The status it answered with (0 when it held the request without answering). */
  status: number;
  at: number;
}

/** A webhook receiver on loopback, as a CRM or a queue in front of one would be. */
export interface WebhookReceiver {
  url: string;
  readonly received: Received[];
  /**
   * What the next requests are answered with, in order (then 200): a status, or `hang` (never
   * answered, the connection held).
   */
  answer(...statuses: (number | 'hang')[]): void;
  /** Answers every later request with `status` (or holds it: `hang`). */
  always(status: number | 'hang'): void;
  /** The ids (`webhook-id`) of the requests it answered 2xx. */
  acknowledged(): string[];
  close(): Promise<void>;
}

/** Starts a receiver on port 0; register `close` in `afterAll`. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: Received[] = [];
  const queue: (number | 'hang')[] = [];
  let otherwise: number | 'hang' = 200;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const status = queue.length > 0 ? queue.shift()! : otherwise;
      received.push({
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        status: status === 'hang' ? 0 : status,
        at: Date.now(),
      });
      if (status === 'hang') return;
      response.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/alerts`,
    received,
    answer: (...statuses) => queue.push(...statuses),
    always(status) {
      otherwise = status;
    },
    acknowledged: () =>
      received
        .filter((entry) => entry.status >= 200 && entry.status < 300)
        .map((entry) => String(entry.headers['webhook-id'])),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
