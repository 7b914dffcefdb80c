import type { Semaphore } from '../semaphore.js';
import type { UpstreamPage, UpstreamPolicy, UpstreamRequest } from '../upstream-call.js';
import { unavailable } from '../upstream-error.js';

/**
 * The operation's cap on requests in flight (`UPSTREAM_CONCURRENCY`): a call waits for one of
 * `slots` and holds it until it settles. A call whose signal aborted while it waited (the client
 * went away, or the deadline passed) is not sent.
 */
export function concurrency(slots: Semaphore): UpstreamPolicy {
  const released = (page: UpstreamPage) => {
    slots.release();
    return page;
  };
  const releasedAfter = (error: unknown) => {
    slots.release();
    throw error;
  };
  return (next) => {
    const send = (request: UpstreamRequest) => {
      if (request.signal?.aborted) {
        slots.release();
        return Promise.reject(unavailable('aborted', 'the client went away'));
      }
      return next(request).then(released, releasedAfter);
    };
    return (request) => {
      const queued = slots.acquire();
      return queued ? queued.then(() => send(request)) : send(request);
    };
  };
}
