import { BREAK, Kind, visit, type DocumentNode } from 'graphql';

/** The media types an answer in parts is sent as (Yoga's result processors). */
const INCREMENTAL_MEDIA_TYPES = ['multipart/mixed', 'text/event-stream'] as const;

const USES = new WeakMap<DocumentNode, boolean>();

/** Whether a document asks for `@defer` or `@stream` anywhere (whatever their `if`), once per document. */
function usesIncrementalDelivery(document: DocumentNode): boolean {
  let uses = USES.get(document);
  if (uses === undefined) {
    uses = false;
    visit(document, {
      [Kind.DIRECTIVE](node) {
        if (node.name.value !== 'defer' && node.name.value !== 'stream') return undefined;
        uses = true;
        return BREAK;
      },
    });
    USES.set(document, uses);
  }
  return uses;
}

/**
 * Whether an operation is delivered in parts: its document asks for `@defer` or `@stream`, and its
 * request's `Accept` names a media type an answer in parts is sent as (`multipart/mixed`, as Apollo
 * Client, Relay's network layers and urql send it, or `text/event-stream`). Any other client
 * (`application/json`, `*\/*`, no `Accept`) gets the whole answer at once, as if the directives
 * were not there.
 */
export function deliveredInParts(document: DocumentNode, accept: string | null | undefined) {
  if (!accept) return false;
  const lower = accept.toLowerCase();
  if (!INCREMENTAL_MEDIA_TYPES.some((type) => lower.includes(type))) return false;
  return usesIncrementalDelivery(document);
}
