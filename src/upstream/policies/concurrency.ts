import type { Semaphore } from '../semaphore.js';
import type { UpstreamPolicy } from '../upstream-call.js';
import { unavailable } from '../upstream-error.js';

/**
 * The operation's cap on requests in flight (`UPSTREAM_CONCURRENCY`): a call waits for one of
 * `slots` and holds it until it settles. A call whose signal aborted while it waited (the client
 * went away, or the deadline passed) is not sent.
 */
export function concurrency(slots: Semaphore): UpstreamPolicy {
  return (next) => async (request) => {
    const queued = slots.acquire();
    if (queued) await queued;
    try {
      if (request.signal?.aborted) throw unavailable('aborted', 'the client went away');
      return await next(request);
    } finally {
      slots.release();
    }
  };
}
