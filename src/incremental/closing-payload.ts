/**
 * `payloads`, then the one payload `closing()` gives once they have ended, if it gives one: the
 * last word of an answer in parts said after its last part (its credit totals, which clients read
 * at the top of a payload without parts). The client going away ends both.
 */
export function withClosingPayload<T>(
  payloads: AsyncIterable<T>,
  closing: () => T | undefined,
): AsyncIterableIterator<T> {
  const source = payloads[Symbol.asyncIterator]();
  let closed = false;
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next(): Promise<IteratorResult<T>> {
      if (closed) return { done: true, value: undefined };
      const step = await source.next();
      if (!step.done) return step;
      closed = true;
      const last = closing();
      return last === undefined ? step : { done: false, value: last };
    },
    async return(): Promise<IteratorResult<T>> {
      closed = true;
      await source.return?.();
      return { done: true, value: undefined };
    },
  };
}
