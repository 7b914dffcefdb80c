import type { Plugin } from 'graphql-yoga';
import { ErrorCode, gatewayError } from '../errors.js';

/**
 * The most a refused body may declare and still be read to its end (by Node, which reads off what
 * a handler left unread once the answer is sent), so that a client still sending reads the 413
 * rather than a reset: a connection closed under unread data is reset, and many clients report
 * the reset, not the answer. A larger one is refused and closed at once.
 */
const DRAIN_MAX_BYTES = 16 * 1024 * 1024;

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
 * counted as it is read. A body refused by its `Content-Length` (up to {@link DRAIN_MAX_BYTES}) is
 * answered at once and read off by Node after the answer, so that its sender reads the 413 and the
 * connection stays usable. A chunked one, read in part, and a larger one get `Connection: close`:
 * kept alive, a half-read chunked body left the next request on the connection unanswered.
 */
export function useRequestBodyLimit(limit: number): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      const length = request.headers.get('content-length');
      if (length !== null) {
        if (!/^\d+$/.test(length)) {
          throw gatewayError(ErrorCode.BAD_REQUEST, 'The Content-Length header is invalid.');
        }
        const size = Number(length);
        if (size > limit) throw tooLarge(limit, { close: size > DRAIN_MAX_BYTES });
        return;
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
