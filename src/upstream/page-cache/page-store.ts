import type { UpstreamPage } from '../upstream-call.js';

/**
 * A complete 2xx page as the cache holds it (its body's size bounds the memory store), and when
 * the service sent it.
 */
export interface CachedPage extends UpstreamPage {
  /** When the response arrived (ms since the epoch): how fresh its `creditsRemaining` is. */
  readonly receivedAt: number;
}

/** A page kept past its TTL, served in place of a request the service failed, and its age. */
export interface StalePage {
  readonly page: CachedPage;
  /** How long ago the page was stored (ms): the TTL and then up to the stale window. */
  readonly ageMs: number;
}

/**
 * A whole GraphQL answer kept for repeat views (`src/answers/`): what a repeat needs to answer
 * without running, and to report truthfully what it would have cost.
 */
export interface StoredAnswer {
  /** The answer's `data`, as JSON bytes. */
  readonly data: Buffer;
  /** The response headers that do not change per request (type, CORS, `Vary`, `Cache-Control`). */
  readonly headers: readonly (readonly [string, string])[];
  /** The operation's name, for the log line. */
  readonly operation: string | null;
  /** Its estimate: a repeat is admitted by the same budget and quota as a run. */
  readonly estimate: number;
  /** The credits its pages were worth (used and saved): what a repeat saves. */
  readonly credits: number;
  /** The workspace's credits left as its freshest page said, and when that page was sent. */
  readonly remaining: number | null;
  readonly remainingAt: number;
}

/**
 * Where cached pages live: in this process (`MemoryPageStore`), or with `REDIS_URL` in this
 * process in front of Redis (`TieredPageStore`), with the same keys, TTL and semantics. A page is kept for the TTL, when `get` serves it, and
 * then for the stale window (`CACHE_STALE_SECONDS`), when only `getStale` does. A store never
 * throws: when it cannot answer, a page is not there, and a claim is granted, so the gateway falls
 * back to the upstream.
 */
export interface PageStore {
  /** The page under `key` if it is there and younger than the TTL. */
  get(key: string): Promise<CachedPage | undefined>;
  /**
   * The page under `key` if it is younger than the TTL plus the stale window, expired or not,
   * with its age: for when the service is down (`policies/stale.ts`).
   */
  getStale(key: string): Promise<StalePage | undefined>;
  /**
   * Keeps `page` under `key` for the TTL and the stale window; resolves once a remote store holds
   * it, so that another instance asking next finds it (a failure is reported, never thrown).
   */
  set(key: string, page: CachedPage): Promise<void> | void;
  /**
   * Claims the fetch of `key` among the instances sharing this store: true when no other is
   * fetching it now. The memory store has no others: always true.
   */
  claim(key: string): Promise<boolean>;
  /** Gives up a claim once the page is stored or its fetch failed. */
  release(key: string): void;
  /**
   * Waits until `key` is stored by the instance that claimed it, at most until `deadline`
   * (`Date.now()` units) or until `signal` aborts; undefined when it was not stored (that fetch
   * failed, or took too long).
   */
  awaitPage(key: string, deadline: number, signal?: AbortSignal): Promise<CachedPage | undefined>;
  /**
   * Resolves once the store can answer (a remote one connected), or after `timeoutMs` if it
   * cannot: a gateway then starts and serves from the upstream until it can.
   */
  ready(timeoutMs: number): Promise<void>;
  /** The answer under `key` if it is there and still as fresh as its pages. */
  getAnswer(key: string): Promise<StoredAnswer | undefined> | StoredAnswer | undefined;
  /**
   * Keeps `answer` under `key` for `ttlMs` (what is left of its oldest page's TTL); never throws.
   * In memory, answers have bounds of their own and never push a page out.
   */
  setAnswer(key: string, answer: StoredAnswer, ttlMs: number): Promise<void> | void;
  /**
   * Drops everything stored so far for the key whose hash is `owner` (`ownerOf` of its pages'
   * and answers' names): the service refused the key (401). Neither `get`, `getStale`,
   * `awaitPage` nor `getAnswer` serves any of it again, here at once, and on any instance
   * sharing the store from its next read of the key in it (one cut off from it: once it reaches
   * it again); what is stored after this is served as before. Resolves once a shared store has
   * it, or was asked to.
   */
  revoke(owner: string): Promise<void> | void;
  /** Bytes of pages and answers held in this process's memory, for metrics. */
  bytesHeld(): number;
  close(): Promise<void>;
}
