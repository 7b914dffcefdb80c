import { mapAsyncIterator } from 'graphql-yoga';
import { CompleteResult } from './complete-result.js';
import type { IncrementalPayload } from './incremental-payload.js';

/**
 * An answer delivered in parts (`@defer`, `@stream`), as its request's booking follows it: its
 * payloads merged as they are sent ({@link complete}), and what is to be done once it ends, at its
 * last payload or when the client goes away (the report, the trace, the answer kept for repeat
 * views), each once. Whatever is booked of a request answered in parts waits for {@link ended}:
 * its response's headers are sent with its first payload.
 */
export class AnswerParts {
  readonly complete = new CompleteResult();
  #ended = false;
  readonly #then: (() => void)[] = [];

  /** `payloads` as sent, each merged into {@link complete} on its way, the end noted. */
  track(payloads: AsyncIterable<IncrementalPayload>): AsyncIterable<IncrementalPayload> {
    // Ended once the payloads below have ended too (the client gone: once the operation is
    // settled, `useCredits`), or failed.
    return mapAsyncIterator(
      payloads,
      (payload: IncrementalPayload) => {
        this.complete.add(payload);
        return payload;
      },
      (error: unknown) => {
        this.#end();
        throw error;
      },
      () => this.#end(),
    );
  }

  /** Runs `then` once the answer has ended: now if it has. */
  ended(then: () => void): void {
    if (this.#ended) then();
    else this.#then.push(then);
  }

  /** True once every payload was sent (its last said `hasNext: false`). */
  get whole(): boolean {
    return !this.complete.hasNext;
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const then of this.#then.splice(0)) then();
  }
}
