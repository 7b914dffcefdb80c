import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { DoorContext } from '../admission/door-context.js';
import { ErrorCode, gatewayError } from '../errors.js';

/** True for a JSON body, as Yoga's own parser tells one (`application/json`, `…graphql+json`). */
function isJson(request: Request): boolean {
  const type = request.headers.get('content-type')?.split(',')[0]?.trim() ?? '';
  return /^application\/(?:graphql\+)?json(?:;|$)/i.test(type);
}

/** Yoga's answer to a JSON body that is not a parameters object. */
function notAnObject(got: string): GraphQLError {
  return gatewayError(
    ErrorCode.BAD_REQUEST,
    `POST body is expected to be object but received ${got}`,
  );
}

/** The GraphQL parameters of a JSON body, refused as Yoga's own parser refuses them. */
function parseJson(body: Buffer): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new GraphQLError('POST body sent invalid JSON.', {
      extensions: {
        http: { spec: true, status: 400 },
        code: 'BAD_REQUEST',
        originalError: { name: (error as Error).name, message: (error as Error).message },
      },
    });
  }
  if (parsed === null) throw notAnObject('null');
  if (typeof parsed !== 'object') throw notAnObject(typeof parsed);
  return parsed as Record<string, unknown>;
}

/**
 * Parses a POST body that a door already read (the repeat-view front reads a body to name its
 * answer, and hands it on in the server context): a JSON body at once, any other through the
 * parser Yoga chose, over a request holding those bytes. Must come after the plugins that choose
 * or wrap the parser (useRequestParamErrors, useRequestBodyLimit).
 */
export function useDoorBody(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, serverContext, fetchAPI }) {
      const { body } = serverContext as DoorContext;
      if (!body || request.method !== 'POST' || !requestParser) return;
      if (isJson(request)) {
        setRequestParser(() => parseJson(body));
        return;
      }
      const parse = requestParser;
      setRequestParser((read) =>
        parse(
          new fetchAPI.Request(read.url, {
            method: 'POST',
            headers: read.headers,
            body: body as unknown as BodyInit,
          }),
        ),
      );
    },
  };
}
