import { creditsOf } from '../../credits/credit-ledger.js';
import { pageKey } from '../page-cache/page-key.js';
import {
  requestWith,
  type UpstreamPage,
  type UpstreamPolicy,
  type UpstreamRequest,
} from '../upstream-call.js';
import { unavailable } from '../upstream-error.js';
import type { UpstreamObserver } from '../upstream-observer.js';

/** One request in flight, and the calls waiting for it. */
export interface Flight {
  readonly promise: Promise<UpstreamPage>;
  /** Aborts the request once every call waiting for it has gone. */
  readonly controller: AbortController;
  waiters: number;
  settled: boolean;
}

/** The requests in flight by page key: one table per gateway, shared by every operation. */
export type Flights = Map<string, Flight>;

/** The events of {@link coalesce}: each page served by joining (`served`, from `joined`). */
export type CoalesceEvents = Pick<UpstreamObserver, 'served'>;

/**
 * Joins concurrent calls for the same page of the same key (across operations) to one request:
 * the first call's request is sent, with a signal of its own that aborts only when every call
 * waiting for it has aborted; the others book the page's credits as saved. A call with `fresh`
 * joins only another `fresh` one: a page already under way from the cache is not fresh.
 * Events: `served`.
 */
export function coalesce(flights: Flights, events?: CoalesceEvents): UpstreamPolicy {
  return (next) => {
    function start(key: string, request: UpstreamRequest): Flight {
      const controller = new AbortController();
      const flight: Flight = {
        promise: next(requestWith(request, { signal: controller.signal })),
        controller,
        waiters: 0,
        settled: false,
      };
      const done = () => {
        flight.settled = true;
        flights.delete(key);
      };
      flight.promise.then(done, done);
      flights.set(key, flight);
      return flight;
    }

    return (request) => {
      const key = request.fresh ? `fresh\n${pageKey(request)}` : pageKey(request);
      const joined = flights.get(key);
      const flight = joined ?? start(key, request);
      return wait(flight, request, joined !== undefined, events);
    };
  };
}

/** The flight's page for one call; rejects at once if the call's own signal aborts. */
function wait(
  flight: Flight,
  request: UpstreamRequest,
  joined: boolean,
  events: CoalesceEvents | undefined,
): Promise<UpstreamPage> {
  const { signal } = request;
  if (signal?.aborted) return Promise.reject(unavailable('aborted', 'the request was aborted'));
  flight.waiters++;
  return new Promise<UpstreamPage>((resolve, reject) => {
    let left = false;
    const leave = () => {
      if (left) return false;
      left = true;
      signal?.removeEventListener('abort', onAbort);
      flight.waiters--;
      return true;
    };
    function onAbort() {
      if (!leave()) return;
      if (flight.waiters === 0 && !flight.settled) flight.controller.abort();
      reject(unavailable('aborted', 'the request was aborted'));
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    flight.promise.then(
      (page) => {
        if (!leave()) return;
        // The first call's request booked the page in its ledger as it arrived.
        if (joined) {
          request.ledger.served(page.envelope, Date.now());
          events?.served?.(request.endpoint, creditsOf(page.envelope), 'joined');
        }
        resolve(page);
      },
      (error: unknown) => {
        if (leave()) reject(error);
      },
    );
  });
}
