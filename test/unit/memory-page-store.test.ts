import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { MemoryPageStore } from '../../src/upstream/page-cache/memory-page-store.js';
import { envelope, records } from '../helpers/mock-service.js';

/** A TTL the tests wait out, and the stale window past it. */
const TTL_MS = 50;
const STALE_MS = 400;

describe('MemoryPageStore past the TTL', () => {
  it('`get` serves a page for the TTL; `getStale` for the stale window after it, with its age', async () => {
    const store = new MemoryPageStore({ ttlMs: TTL_MS, staleMs: STALE_MS, maxBytes: 1_000_000 });
    const page = { envelope: envelope(records(1)), bytes: 10, receivedAt: Date.now() };
    store.set('k', page);
    expect(await store.get('k')).toBe(page);
    expect((await store.getStale('k'))?.page).toBe(page);
    await sleep(TTL_MS + 10);
    expect(await store.get('k')).toBeUndefined();
    const kept = await store.getStale('k');
    expect(kept?.page).toBe(page);
    expect(kept!.ageMs).toBeGreaterThanOrEqual(TTL_MS);
    expect(kept!.ageMs).toBeLessThan(TTL_MS + STALE_MS);
    await sleep(STALE_MS);
    expect(await store.getStale('k')).toBeUndefined();
  });

  it('without a stale window, keeps nothing past the TTL', async () => {
    const store = new MemoryPageStore({ ttlMs: TTL_MS, maxBytes: 1_000_000 });
    store.set('k', { envelope: envelope(records(1)), bytes: 10, receivedAt: Date.now() });
    await sleep(TTL_MS + 10);
    expect(await store.getStale('k')).toBeUndefined();
  });
});
