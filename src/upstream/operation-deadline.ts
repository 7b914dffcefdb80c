import { UpstreamError } from './upstream-error.js';

/** The abort reason when the operation's deadline passes. */
class DeadlinePassed extends Error {
  override readonly name = 'OperationDeadline';
}

/**
 * One operation's abort signal, kept by the `deadline` policy: it follows the client's (the HTTP
 * request's) and aborts at the operation's deadline, `ms` after its first upstream request. Made
 * per operation; {@link stop} ends it once the operation's result is complete.
 */
export class OperationDeadline {
  /** When the deadline passes (ms since the epoch), once the first request started it. */
  at: number | undefined;
  readonly #ms: number | undefined;
  readonly #client: AbortSignal | undefined;
  #controller: AbortController | null = null;
  #timer: NodeJS.Timeout | undefined;

  /** `ms` absent: no deadline, only the client's signal; both absent: no signal at all. */
  constructor(ms: number | undefined, client: AbortSignal | undefined) {
    this.#ms = ms;
    this.#client = client;
  }

  /**
   * The signal of this operation's requests, made at its first (which starts the deadline): a
   * native signal that follows the client's (the server adapter's own stops reporting `aborted`
   * once `AbortSignal.any` touches it) and the deadline.
   */
  signal(): AbortSignal | undefined {
    const client = this.#client;
    const ms = this.#ms;
    if (!client && !ms) return undefined;
    if (!this.#controller) {
      const controller = new AbortController();
      this.#controller = controller;
      if (client?.aborted) controller.abort(client.reason);
      client?.addEventListener('abort', () => controller.abort(client.reason), { once: true });
      if (ms) {
        this.at = Date.now() + ms;
        this.#timer = setTimeout(() => controller.abort(new DeadlinePassed()), ms);
        this.#timer.unref();
      }
    }
    return this.#controller.signal;
  }

  /** OPERATION_TIMEOUT when the deadline is why the signal aborted; else null. */
  passed(): UpstreamError | null {
    const signal = this.#controller?.signal;
    if (!signal?.aborted || !(signal.reason instanceof DeadlinePassed)) return null;
    return new UpstreamError(
      `The operation took longer than its ${this.#ms} ms (OPERATION_TIMEOUT_MS): this field was not completed.`,
      { code: 'OPERATION_TIMEOUT', failure: 'deadline' },
    );
  }

  /** Ends the operation: its deadline no longer runs. */
  stop(): void {
    clearTimeout(this.#timer);
  }
}
