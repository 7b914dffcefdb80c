import { GraphQLError } from 'graphql';
import { ErrorCode, gatewayError } from '../errors.js';

/**
 * True for a JSON body's media type, as Yoga's own parser tells one (`application/json`,
 * `application/graphql+json`).
 */
export function isJsonType(contentType: string | null | undefined): boolean {
  const type = contentType?.split(',')[0]?.trim() ?? '';
  return /^application\/(?:graphql\+)?json(?:;|$)/i.test(type);
}

/** Yoga's answer to a JSON body that is not a parameters object. */
function notAnObject(got: string): GraphQLError {
  return gatewayError(
    ErrorCode.BAD_REQUEST,
    `POST body is expected to be object but received ${got}`,
  );
}

/**
 * The GraphQL parameters of a JSON body, refused as Yoga's own parser refuses them (400
 * BAD_REQUEST): not JSON, or not an object. An array (a batch) is returned as it is.
 */
export function parseJsonParams(body: Buffer): Record<string, unknown> {
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
