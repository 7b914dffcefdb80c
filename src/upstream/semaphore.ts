/**
 * At most `slots` holders at once; the rest wait in arrival order. A released slot is handed
 * straight to the next waiter, never freed first, so a caller arriving at that moment cannot take
 * it and exceed the bound. Hand-written rather than `p-limit`: one is made per operation, and this
 * is a counter and an array, without a closure per task.
 */
export class Semaphore {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(slots: number) {
    this.#free = slots;
  }

  /** Resolves when the caller holds a slot; pair every `acquire` with one `release`. */
  acquire(): Promise<void> | void {
    if (this.#free > 0) {
      this.#free--;
      return;
    }
    return new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  /** Gives the slot to the next waiter, or frees it. */
  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}
