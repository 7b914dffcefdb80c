import { IncomingMessage } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import { ErrorCode, gatewayError } from '../errors.js';
import { readOffBody } from '../read-off-body.js';

/**
 * The most a refused body may declare and still be read off before its 413 is sent. A larger one
 * is refused at once and its connection closed.
 */
export const DRAIN_MAX_BYTES = 16 * 1024 * 1024;

/**
 * How long a refused body may stop coming before its 413 is sent without the rest (which is still
 * read off if it comes, within `REQUEST_TIMEOUT_MS`): a client that waits for an answer before it
 * sends more is answered.
 */
const READ_OFF_IDLE_MS = 1_000;

/** The 413; with `close`, the connection closes after it (the rest of the body is not read). */
function tooLarge(limit: number, { close }: { close: boolean }) {
  const error = gatewayError(
    ErrorCode.REQUEST_ENTITY_TOO_LARGE,
    `The request body is larger than ${limit} bytes.`,
  );
  if (close) (error.extensions['http'] as { headers?: object }).headers = { connection: 'close' };
  return error;
}

/**
 * Refuses request bodies above `limit` bytes. Replaces Yoga's own limit (`maxRequestBodySize`),
 * which pipes every body through a counting stream: that cost a third of the gateway's CPU on a
 * small query. A `Content-Length` is checked as a number, and a body without one (chunked) is
 * counted as it is read.
 *
 * A body refused by its `Content-Length` (up to {@link DRAIN_MAX_BYTES}) is read off, kept nowhere,
 * before its 413 is sent, so that the client has sent it all when the answer comes. Answered while
 * it still sends, a `node:http` client waiting for 'drain' stalls (once a response is complete,
 * Node no longer forwards its socket's 'drain' to the request) until the connection is cut, and a
 * connection closed after the answer (`Connection: close`) is closed under the unread rest, which
 * resets it (EPIPE). The connection stays usable. A chunked body, read in part, and a larger one
 * get `Connection: close`: kept alive, a half-read chunked body left the next request on the
 * connection unanswered. Over `app.fetch` (no socket) nothing is read off.
 */
export function useRequestBodyLimit(limit: number): Plugin {
  return {
    onRequestParse({ request, serverContext, requestParser, setRequestParser, fetchAPI }) {
      const length = request.headers.get('content-length');
      if (length !== null) {
        if (!/^\d+$/.test(length)) {
          throw gatewayError(ErrorCode.BAD_REQUEST, 'The Content-Length header is invalid.');
        }
        const size = Number(length);
        if (size <= limit) return;
        // Node's request, when the app is served by `node:http` (whatwg-node's server context).
        const { req } = serverContext as { req?: unknown };
        if (size > DRAIN_MAX_BYTES || !(req instanceof IncomingMessage)) {
          throw tooLarge(limit, { close: size > DRAIN_MAX_BYTES });
        }
        return readOffBody(req, READ_OFF_IDLE_MS).then(() => {
          throw tooLarge(limit, { close: false });
        });
      }
      if (!requestParser || !request.body) return;
      const parse = requestParser;
      setRequestParser(async (chunked) => {
        const chunks: Uint8Array[] = [];
        let size = 0;
        const reader = chunked.body!.getReader();
        for (let read = await reader.read(); !read.done; read = await reader.read()) {
          size += read.value.byteLength;
          if (size > limit) {
            await reader.cancel();
            throw tooLarge(limit, { close: true });
          }
          chunks.push(read.value);
        }
        return parse(
          new fetchAPI.Request(chunked.url, {
            method: chunked.method,
            headers: chunked.headers,
            body: Buffer.concat(chunks),
          }),
        );
      });
    },
  };
}
