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

/** A page name of `owner`'s (a key's hash, as `pageKey` writes it), and a page of `bytes`. */
const pageOf = (owner: string, name: string) => `${owner}\ncompanies?\n${name}\n5`;
const page = (bytes: number) => ({ envelope: envelope(records(1)), bytes, receivedAt: Date.now() });
/** An answer name of `owner`'s (as `answerKey` writes it), and an answer of `bytes` of data. */
const answerOf = (owner: string, name: string) => `${owner}\n${name}`;
const answer = (bytes: number) => ({
  data: Buffer.alloc(bytes, 'a'),
  headers: [],
  operation: null,
  estimate: 1,
  credits: 1,
  remaining: null,
  remainingAt: 0,
});

describe('MemoryPageStore: whole answers apart from the pages', () => {
  it('answers have a quarter of the bound more, and never push a page out', async () => {
    const store = new MemoryPageStore({ ttlMs: 60_000, maxBytes: 100_000 });
    for (let i = 0; i < 9; i++) store.set(pageOf('a', `p${i}`), page(10_000));
    for (let i = 0; i < 100; i++)
      store.setAnswer(answerOf(`anon-${i}`, 'q'), answer(5_000), 60_000);
    for (let i = 0; i < 9; i++) expect(await store.get(pageOf('a', `p${i}`))).toBeDefined();
    // 90 KB of pages (and their names), at most 25 KB of answers.
    expect(store.bytesHeld()).toBeGreaterThan(90_000);
    expect(store.bytesHeld()).toBeLessThanOrEqual(125_000);
  });

  it("one key's answers take at most half of their room: the other keys' stay", async () => {
    const store = new MemoryPageStore({ ttlMs: 60_000, maxBytes: 100_000 });
    store.setAnswer(answerOf('a', 'q'), answer(5_000), 60_000);
    store.setAnswer(answerOf('b', 'q'), answer(5_000), 60_000);
    for (let i = 0; i < 100; i++) store.setAnswer(answerOf('c', `q${i}`), answer(2_000), 60_000);
    expect(store.getAnswer(answerOf('a', 'q'))).toBeDefined();
    expect(store.getAnswer(answerOf('b', 'q'))).toBeDefined();
    // Key c made room from its own oldest answers: it keeps its newest, within 12.5 KB.
    expect(store.getAnswer(answerOf('c', 'q99'))).toBeDefined();
    expect(store.getAnswer(answerOf('c', 'q0'))).toBeUndefined();
    const cHeld = Array.from({ length: 100 }, (_, i) => store.getAnswer(answerOf('c', `q${i}`)));
    expect(cHeld.filter(Boolean).length).toBeLessThanOrEqual(6);
  });

  it("`revoke` drops one key's pages (fresh or kept past the TTL) and answers, no other key's", async () => {
    const store = new MemoryPageStore({ ttlMs: TTL_MS, staleMs: STALE_MS, maxBytes: 1_000_000 });
    store.set(pageOf('a', 'old'), page(100));
    await sleep(TTL_MS + 10);
    store.set(pageOf('a', 'new'), page(100));
    store.set(pageOf('b', 'new'), page(100));
    store.setAnswer(answerOf('a', 'q'), answer(100), 60_000);
    store.setAnswer(answerOf('b', 'q'), answer(100), 60_000);
    expect((await store.getStale(pageOf('a', 'old')))?.ageMs).toBeGreaterThanOrEqual(TTL_MS);
    store.revoke('a');
    expect(await store.getStale(pageOf('a', 'old'))).toBeUndefined();
    expect(await store.get(pageOf('a', 'new'))).toBeUndefined();
    expect(store.getAnswer(answerOf('a', 'q'))).toBeUndefined();
    expect(await store.get(pageOf('b', 'new'))).toBeDefined();
    expect(store.getAnswer(answerOf('b', 'q'))).toBeDefined();
    // What is stored after is served as before.
    store.set(pageOf('a', 'new'), page(100));
    expect(await store.get(pageOf('a', 'new'))).toBeDefined();
  });
});
