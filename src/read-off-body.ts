import type { IncomingMessage } from 'node:http';

/**
 * Reads `request`'s body off, keeping none of it, and resolves once it has all come, the client is
 * gone, or none of it came for `idleMs`. Whatever is still to come is read off too (the request
 * stays flowing), so that a kept-alive connection carries the next request; Node's
 * `requestTimeout` bounds how long that may take.
 */
export function readOffBody(request: IncomingMessage, idleMs: number): Promise<void> {
  if (request.readableEnded || request.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const idle = setTimeout(done, idleMs);
    const arrived = () => idle.refresh();
    function done() {
      clearTimeout(idle);
      request.off('data', arrived);
      request.off('end', done);
      request.off('close', done);
      resolve();
    }
    // A 'data' listener drops each chunk as it comes; removing it later does not pause the stream.
    request.on('data', arrived);
    request.once('end', done);
    request.once('close', done);
  });
}
