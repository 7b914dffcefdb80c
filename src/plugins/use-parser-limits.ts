import type { Plugin } from 'graphql-yoga';
import { PARSER_MAX_DEPTH } from '../config.js';
import { ErrorCode, gatewayError } from '../errors.js';

/** Limits on a GraphQL document, checked before it is parsed. */
export interface ParserLimits {
  /** Deepest nesting of `{`, `[` and `(` together (default {@link PARSER_MAX_DEPTH}). */
  maxDepth?: number;
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_PAREN = 0x28;
const CLOSE_PAREN = 0x29;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HASH = 0x23;
const NEWLINE = 0x0a;
const RETURN = 0x0d;

/**
 * Whether `source` nests `{`, `[` and `(` more than `limit` deep, outside strings, block strings
 * and comments. One pass over the characters, no allocation. A malformed document (unbalanced,
 * unterminated string) is left to the parser to report.
 */
function nestsDeeperThan(source: string, limit: number): boolean {
  let depth = 0;
  const end = source.length;
  for (let i = 0; i < end; i++) {
    const c = source.charCodeAt(i);
    if (c === OPEN_BRACE || c === OPEN_BRACKET || c === OPEN_PAREN) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET || c === CLOSE_PAREN) {
      if (depth > 0) depth--;
    } else if (c === HASH) {
      while (
        i + 1 < end &&
        source.charCodeAt(i + 1) !== NEWLINE &&
        source.charCodeAt(i + 1) !== RETURN
      )
        i++;
    } else if (c === QUOTE) {
      if (source.startsWith('""', i + 1)) {
        // A block string ends at the next `"""` not escaped as `\"""`.
        i += 3;
        while (i < end && !source.startsWith('"""', i)) {
          i += source.startsWith('\\"""', i) ? 4 : 1;
        }
        i += 2;
      } else {
        // A string ends at the next unescaped `"`, or (malformed) at the end of the line.
        for (i++; i < end; i++) {
          const s = source.charCodeAt(i);
          if (s === BACKSLASH) i++;
          else if (s === QUOTE || s === NEWLINE || s === RETURN) break;
        }
      }
    }
  }
  return false;
}

function tooDeep(maxDepth: number) {
  return gatewayError(
    ErrorCode.DOCUMENT_TOO_DEEP,
    `The document is nested more than ${maxDepth} levels deep (selection sets, lists and arguments together); nothing ran. Flatten the query or split it into several.`,
  );
}

/**
 * Refuses documents nested deeper than `maxDepth`, which would make graphql-js's recursive parser
 * overflow the stack (a 500 and a stack trace on stderr per request): DOCUMENT_TOO_DEEP, found by
 * a scan of the source before parsing. (The token limit, the other guard of the parser, is
 * `MAX_TOKENS` in useQueryLimits.)
 *
 * A parse error to Yoga: HTTP 400 under `Accept: application/graphql-response+json`, 200 under
 * `application/json` alone, as the GraphQL-over-HTTP spec asks.
 *
 * Wraps the parse function it is given rather than replacing it, so Yoga's parse cache still
 * answers a document it has seen (refusals included) without a second scan, and the token limit
 * set before it still applies.
 */
export function useParserLimits({ maxDepth = PARSER_MAX_DEPTH }: ParserLimits = {}): Plugin {
  return {
    onParse({ parseFn, setParseFn }) {
      setParseFn((source, options) => {
        if (nestsDeeperThan(typeof source === 'string' ? source : source.body, maxDepth)) {
          throw tooDeep(maxDepth);
        }
        return parseFn(source, options);
      });
    },
  };
}
