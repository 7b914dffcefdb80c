import type { Plugin } from 'graphql-yoga';

type ResponseClass = new (body?: unknown, init?: ResponseInit) => Response;

/** True for headers given as a plain object that name a Content-Type (Yoga's JSON answers). */
function namesContentType(init: ResponseInit | undefined): boolean {
  const headers = init?.headers;
  if (!headers || typeof headers !== 'object' || Array.isArray(headers)) return false;
  if (typeof (headers as Headers).get === 'function') return false;
  return 'Content-Type' in headers || 'content-type' in headers;
}

/**
 * Makes Yoga's answers carry their body as a Buffer rather than a string. Node writes a string body
 * by concatenating it to the response's head, a second copy of the whole answer (73 KB of a 20-event
 * list's 581 KB of allocation), and whatwg-node walks the string once more for its byte length; a
 * Buffer is written after the head as it is. Only a string body whose headers name its
 * Content-Type is converted (Yoga's JSON results), so no response loses its default type.
 */
export function useBufferedResponses(): Plugin {
  return {
    onYogaInit({ yoga }) {
      const fetchAPI = yoga.fetchAPI as unknown as { Response: ResponseClass };
      const Base = fetchAPI.Response;
      fetchAPI.Response = class BufferedResponse extends Base {
        constructor(body?: unknown, init?: ResponseInit) {
          super(
            typeof body === 'string' && namesContentType(init) ? Buffer.from(body) : body,
            init,
          );
        }
      };
    },
  };
}
