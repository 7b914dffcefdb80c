import { GraphQLError } from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { ErrorCode } from '../errors.js';

/** The parameters a query string or a form body carries as JSON text. */
const JSON_PARAMS = ['variables', 'extensions'] as const;

function isFormBody(request: Request) {
  const type = request.headers.get('content-type')?.split(',')[0]?.trim().toLowerCase();
  return (
    type === 'application/x-www-form-urlencoded' ||
    !!type?.startsWith('application/x-www-form-urlencoded;')
  );
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
      throw new GraphQLError(
        `The "${name}" parameter is not valid JSON: send a URL-encoded JSON object such as {"first":5}.`,
        { extensions: { code: ErrorCode.BAD_REQUEST, http: { status: 400 } } },
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
 * object) is still checked by Yoga, also as a 400 BAD_REQUEST.
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
      } else if (request.method === 'POST' && isFormBody(request)) {
        setRequestParser(async (post) => paramsFrom(new URLSearchParams(await post.text())));
      }
    },
  };
}
