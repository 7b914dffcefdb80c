import { GraphQLError } from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { ErrorCode, gatewayError } from '../errors.js';

/** The parameters a query string or a form body carries as JSON text. */
const JSON_PARAMS = ['variables', 'extensions'] as const;

/** The media type of the request's body, lower-cased, without its parameters. */
function mediaType(request: Request): string | undefined {
  return request.headers.get('content-type')?.split(/[,;]/)[0]?.trim().toLowerCase();
}

/** A refusal of the request's parameters: HTTP 400 BAD_REQUEST with `message`. */
function badRequest(message: string): GraphQLError {
  return gatewayError(ErrorCode.BAD_REQUEST, message);
}

function paramsFrom(search: URLSearchParams): GraphQLParams {
  const params: GraphQLParams = {
    operationName: search.get('operationName') || undefined,
    query: search.get('query') || undefined,
  };
  for (const name of JSON_PARAMS) {
    const text = search.get(name);
    if (!text) continue;
    try {
      params[name] = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw badRequest(
        `The "${name}" parameter is not valid JSON: send a URL-encoded JSON object such as {"first":5}.`,
      );
    }
  }
  return params;
}

/**
 * Reads the GraphQL parameters of a GET query string or a form-encoded POST body as Yoga does,
 * but answers HTTP 400 BAD_REQUEST naming the parameter when `variables` or `extensions` is not
 * JSON. Yoga's own parsers let `JSON.parse`'s SyntaxError escape, which is masked to a 500
 * "Unexpected error." and logged with its stack. Whether a parsed value has the right type (an
 * object) is still checked by Yoga, also as a 400 BAD_REQUEST. A multipart body (the GraphQL
 * multipart request) that Yoga's parser refuses (`operations` or `map` missing or not JSON) is
 * answered 400 BAD_REQUEST with Yoga's message, which it gives without a code and with status 200.
 *
 * Must come before plugins that wrap the chosen parser (useRequestBodyLimit).
 */
export function useRequestParamErrors(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (!requestParser) return;
      if (request.method === 'GET') {
        setRequestParser((get) => {
          const at = get.url.indexOf('?');
          return paramsFrom(new URLSearchParams(at < 0 ? '' : get.url.slice(at + 1)));
        });
      } else if (request.method === 'POST') {
        const type = mediaType(request);
        if (type === 'application/x-www-form-urlencoded') {
          setRequestParser(async (post) => paramsFrom(new URLSearchParams(await post.text())));
        } else if (type === 'multipart/form-data') {
          const parse = requestParser;
          setRequestParser(async (post) => {
            try {
              return await parse(post);
            } catch (error) {
              if (error instanceof GraphQLError && !error.extensions['code']) {
                throw badRequest(error.message);
              }
              throw error;
            }
          });
        }
      }
    },
  };
}
