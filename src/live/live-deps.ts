import type { LiveFeed } from './live-feed.js';
import type { PollerRegistry } from './poller-registry.js';

/** What the subscriptions of one gateway share: the pollers, the open feeds. */
export interface LiveDeps {
  registry: PollerRegistry;
  /** Every open subscription's feed: shutdown closes them. */
  feeds: Set<LiveFeed>;
  /** True once the gateway shuts down: no new subscription starts. */
  shuttingDown(): boolean;
}
