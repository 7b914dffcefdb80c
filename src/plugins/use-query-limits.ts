import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import type { GraphQLError, ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { settings } from '../config.js';
import { ErrorCode, gatewayError, type GatewayErrorCode } from '../errors.js';

/** The limits on the size and shape of a document, each from its setting. */
export interface QueryLimits {
  /** Deepest nesting of fields in an operation (`MAX_DEPTH`). */
  maxDepth: number;
  /** Most aliases in an operation (`MAX_ALIASES`). */
  maxAliases: number;
  /** Most lexical tokens in a document (`MAX_TOKENS`). */
  maxTokens: number;
  /** Most directives in an operation (`MAX_DIRECTIVES`). */
  maxDirectives: number;
}

/**
 * The count Armor found, from its error's message (`... exceeded, found 17.`): a rejection hands
 * over nothing else. Undefined when the message says no count (max-tokens) or its wording changes.
 */
function foundIn(armorError: GraphQLError): number | undefined {
  const match = /found (\d+)\.?$/.exec(armorError.message);
  return match ? Number(match[1]) : undefined;
}

/**
 * An Armor `onReject` handler that refuses with our code instead of Armor's uncoded "Syntax
 * Error: ...": reported as a validation error when Armor validates (so the other rules still
 * report theirs), thrown when it parses (max-tokens has no validation context).
 */
function refuse(
  code: GatewayErrorCode,
  setting: { env: string },
  limit: number,
  has: (count: string) => string,
) {
  return (context: ValidationContext | null, armorError: GraphQLError) => {
    const found = foundIn(armorError);
    const error = gatewayError(
      code,
      `The ${has(found === undefined ? `more than ${limit}` : `${found}`)}; the limit is ${limit} (${setting.env}). Nothing ran: ask for less, or split the query into several.`,
      { limit, found },
    );
    if (!context) throw error;
    context.reportError(error);
  };
}

/**
 * GraphQL Armor's depth, alias, token and directive limits, refused with MAX_DEPTH_EXCEEDED,
 * MAX_ALIASES_EXCEEDED, MAX_TOKENS_EXCEEDED and MAX_DIRECTIVES_EXCEEDED before anything runs (so
 * before any upstream request). The token limit is a parse error, the others validation errors:
 * Yoga answers both HTTP 400 under `Accept: application/graphql-response+json`, 200 under
 * `application/json` alone.
 *
 * Armor's token limit replaces the parse function outright: a plugin that wraps the parse
 * function (useParserLimits) must come after this one.
 */
export function useQueryLimits(limits: QueryLimits): Plugin {
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(
        maxTokensPlugin({
          n: limits.maxTokens,
          onReject: [
            refuse(
              ErrorCode.MAX_TOKENS_EXCEEDED,
              settings.maxTokens,
              limits.maxTokens,
              (n) => `document has ${n} tokens`,
            ),
          ],
        }),
      );
      addPlugin(
        maxDepthPlugin({
          n: limits.maxDepth,
          // Relay clients spread a fragment at nearly every level: depth is the fields' nesting.
          flattenFragments: true,
          // The introspection query GraphiQL and codegen tools send is 15 levels deep (its `ofType`
          // chain), 21 with its fragment spreads: it reaches no upstream, and the guard before
          // parsing and MAX_TOKENS still bound it.
          ignoreIntrospection: true,
          propagateOnRejection: false,
          onReject: [
            refuse(
              ErrorCode.MAX_DEPTH_EXCEEDED,
              settings.maxDepth,
              limits.maxDepth,
              (n) => `operation nests fields ${n} levels deep`,
            ),
          ],
        }),
      );
      addPlugin(
        maxAliasesPlugin({
          n: limits.maxAliases,
          propagateOnRejection: false,
          onReject: [
            refuse(
              ErrorCode.MAX_ALIASES_EXCEEDED,
              settings.maxAliases,
              limits.maxAliases,
              (n) => `operation has ${n} aliases`,
            ),
          ],
        }),
      );
      addPlugin(
        maxDirectivesPlugin({
          n: limits.maxDirectives,
          propagateOnRejection: false,
          onReject: [
            refuse(
              ErrorCode.MAX_DIRECTIVES_EXCEEDED,
              settings.maxDirectives,
              limits.maxDirectives,
              (n) => `operation has ${n} directives`,
            ),
          ],
        }),
      );
    },
  };
}
