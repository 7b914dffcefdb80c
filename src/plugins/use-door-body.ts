import type { Plugin } from 'graphql-yoga';
import type { DoorContext } from '../admission/door-context.js';
import { isJsonType, parseJsonParams } from '../http/json-params.js';

/**
 * Parses a POST body that a door already read (the repeat-view front and the JSON lane read a
 * body, and hand it on in the server context): a JSON body at once, any other through the parser
 * Yoga chose, over a request holding those bytes. Must come after the plugins that choose or wrap
 * the parser (useRequestParamErrors, useRequestBodyLimit).
 */
export function useDoorBody(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, serverContext, fetchAPI }) {
      const { body } = serverContext as DoorContext;
      if (!body || request.method !== 'POST' || !requestParser) return;
      if (isJsonType(request.headers.get('content-type'))) {
        setRequestParser(() => parseJsonParams(body));
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
