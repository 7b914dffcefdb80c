import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HeaderReader } from '../auth/create-authenticator.js';

/** Node's request headers read as a Fetch `Headers` is (names in any case), without copying them. */
export function headerReader(headers: IncomingMessage['headers']): HeaderReader {
  return {
    get(name) {
      const value = headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
    has: (name) => headers[name.toLowerCase()] !== undefined,
  };
}

/** The size a request's `Content-Length` declares, if it is a plain number; else null. */
export function declaredLength(request: IncomingMessage): number | null {
  const length = request.headers['content-length'];
  return length !== undefined && /^\d+$/.test(length) ? Number(length) : null;
}

/** The body of a request whose length is known and bounded. */
export function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    request.once('error', reject);
  });
}

/**
 * Runs `run` with the request's body (`null` when `read` is false: a GET, or a body a door
 * already read). A body that breaks off, or anything thrown past the run's own handling, closes
 * the connection: never left hanging, and nothing left unhandled.
 */
export function withBody(
  request: IncomingMessage,
  response: ServerResponse,
  read: boolean,
  run: (body: Buffer | null) => Promise<unknown>,
): void {
  const fail = () => response.destroy();
  (read ? readBody(request).then(run) : run(null)).catch(fail);
}
