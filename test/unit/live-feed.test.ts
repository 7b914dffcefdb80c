import { describe, expect, it } from 'vitest';
import type { PollListener } from '../../src/live/event-poller.js';
import { FEED_MAX_QUEUED, LiveFeed } from '../../src/live/live-feed.js';

/** A feed joined to a stand-in poller: the test hands it records as a poller would. */
function feed() {
  let listener!: PollListener;
  const ends: (Error | undefined)[] = [];
  const live = new LiveFeed({
    from: 0,
    since: null,
    capacity: () => Infinity,
    join: (joined) => {
      listener = joined;
      return () => undefined;
    },
    admit: () => null,
    onEnd: (error) => ends.push(error),
  });
  return { live, listener: () => listener, ends };
}

const records = (count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => ({ id: `r${from + i}`, discoveredAt: null }));

describe('LiveFeed: a subscriber that falls behind', () => {
  it(`ends with SUBSCRIPTION_TOO_SLOW once more than ${FEED_MAX_QUEUED} records wait, as its last payload`, async () => {
    const { live, listener, ends } = feed();
    listener().deliver(records(FEED_MAX_QUEUED), null);
    expect(ends).toEqual([]);
    listener().deliver(records(1, FEED_MAX_QUEUED), null);
    expect(ends).toHaveLength(1);
    const { value } = await live.next();
    const end = (value as { end: { extensions: Record<string, unknown> } }).end;
    expect(end.extensions).toMatchObject({ code: 'SUBSCRIPTION_TOO_SLOW', limit: FEED_MAX_QUEUED });
    expect((await live.next()).done).toBe(true);
  });

  it('keeps up with a reader that reads: records come out oldest first, none dropped', async () => {
    const { live, listener, ends } = feed();
    listener().deliver(records(3), null);
    const ids = [];
    for (let i = 0; i < 3; i++) {
      const { value } = await live.next();
      ids.push((value as { record: { id: string } }).record.id);
    }
    expect(ids).toEqual(['r0', 'r1', 'r2']);
    expect(ends).toEqual([]);
  });
});
