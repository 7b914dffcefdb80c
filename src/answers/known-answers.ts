import type { AnswerSlot } from '../admission/door-context.js';
import type { PageStore, StoredAnswer } from '../upstream/page-cache/page-store.js';
import { keyHash } from '../upstream/page-cache/page-key.js';
import { isFresher } from '../credits/credit-ledger.js';

/**
 * How a kept answer is written: `{"data":`, its kept `data`, then {@link answerTail}. The data
 * is kept as the bytes between the two, cut from the text of the run that made it.
 */
export const ANSWER_OPEN = '{"data":';

/** What follows an answer's `data`: its `extensions`, if any, and the closing brace. */
export function answerTail(extensions: unknown): string {
  return extensions === undefined ? '}' : `,"extensions":${JSON.stringify(extensions)}}`;
}

/** How many workspace keys {@link KnownAnswers} remembers the freshest balance of. */
const BALANCES_REMEMBERED = 10_000;

/** The response headers an answer keeps: not those that are the request's own. */
const PER_REQUEST_HEADERS = new Set([
  'x-request-id',
  'x-credits-used',
  'x-credits-saved',
  'x-credits-remaining',
  'ratelimit',
  'ratelimit-policy',
  'retry-after',
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
]);

/**
 * The response headers a repeat of its request is sent with, named in lower case (Yoga's
 * `Headers` may keep the case they were set in).
 */
export function keptHeaders(headers: Iterable<[string, string]>): [string, string][] {
  const kept: [string, string][] = [];
  for (const [name, value] of headers) {
    const lower = name.toLowerCase();
    if (!PER_REQUEST_HEADERS.has(lower)) kept.push([lower, value]);
  }
  return kept;
}

/**
 * Whole answers for repeat views, in the page cache's store (apart from its pages, in bounds of
 * their own) and its TTL; the service's 401 for a key drops them with its pages. A request the
 * HTTP front ({@link serveKnownAnswers}) could not answer runs with a slot; once it ends, an
 * answer with no error is kept there (`useAnswerKeeping`) for as long as its oldest page is fresh.
 * Also remembers, per workspace key, the freshest `remaining` the service reported, so that a
 * repeat reports the balance as now known, not as it was.
 */
export class KnownAnswers {
  readonly #store: PageStore;
  readonly #ttlMs: number;
  readonly #balances = new Map<string, { remaining: number; at: number }>();

  /** What may run here (the schema, the admission settings): part of every answer's name. */
  readonly version: string;

  /** `version` names what may run here (`Admission.version`): part of every answer's name. */
  constructor(store: PageStore, ttlMs: number, version: string) {
    this.#store = store;
    this.#ttlMs = ttlMs;
    this.version = version;
  }

  /** The answer kept under `key`, if any (from memory at once, from Redis when it answers). */
  find(key: string): Promise<StoredAnswer | undefined> | StoredAnswer | undefined {
    return this.#store.getAnswer(key);
  }

  /**
   * Keeps `answer` under `slot` until its oldest page (`oldestPageAt`) expires; an answer no
   * fresher than that is not kept. Nor is one with no page (`oldestPageAt` Infinity: no page the
   * service accepted for its key was received, or served from the cache or a joined request):
   * an introspection, or a run with a key the service refused, would only take others' room.
   */
  keep(slot: AnswerSlot, answer: StoredAnswer, oldestPageAt: number): void {
    const ttlMs = oldestPageAt + this.#ttlMs - Date.now();
    if (ttlMs > 0 && Number.isFinite(ttlMs)) void this.#store.setAnswer(slot.key, answer, ttlMs);
  }

  /** Notes the service's balance for `upstreamKey`, reported by a page sent at `at`. */
  observe(upstreamKey: string, remaining: number | null, at: number): void {
    if (remaining === null) return;
    const name = keyHash(upstreamKey);
    const known = this.#balances.get(name);
    if (known && !isFresher(remaining, at, known.remaining, known.at)) return;
    if (!known && this.#balances.size >= BALANCES_REMEMBERED) this.#balances.clear();
    this.#balances.set(name, { remaining, at });
  }

  /** The freshest balance known for `upstreamKey`: `answer`'s own, or a later one. */
  remaining(upstreamKey: string, answer: StoredAnswer): number | null {
    const known = this.#balances.get(keyHash(upstreamKey));
    return known && known.at >= answer.remainingAt ? known.remaining : answer.remaining;
  }
}
