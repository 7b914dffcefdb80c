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
 * Where cached pages live: in this process (`MemoryPageStore`) or in Redis (`RedisPageStore`),
 * with the same keys, TTL and semantics. A page is kept for the TTL, when `get` serves it, and
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
  /** Bytes of pages held, for metrics; undefined for a store that bounds itself (Redis). */
  bytesHeld(): number | undefined;
  close(): Promise<void>;
}
