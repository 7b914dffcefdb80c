import { MockAgent } from 'undici';
import { CreditLedger } from '../../src/credits/credit-ledger.js';
import type { EndpointName } from '../../src/upstream/endpoints.js';
import { createTransport } from '../../src/upstream/transport.js';
import type { ListEnvelope, UpstreamRecord } from '../../src/upstream/types.js';
import type { UpstreamCall, UpstreamRequest } from '../../src/upstream/upstream-call.js';

/** Where the stand-in service answers; nothing listens there: MockAgent intercepts it. */
export const SERVICE = 'http://business-signals.test';

/** A success envelope of `data`, charged one credit a record unless `creditsUsed` says. */
export function envelope(
  data: readonly unknown[],
  options: { nextCursor?: string | null; creditsUsed?: number; creditsRemaining?: number } = {},
): ListEnvelope<UpstreamRecord> {
  const nextCursor = options.nextCursor ?? null;
  return {
    success: true,
    data: [...data] as UpstreamRecord[],
    pagination: { hasMore: nextCursor !== null, nextCursor },
    meta: {
      endpoint: 'stand-in',
      creditsUsed: options.creditsUsed ?? data.length,
      creditsRemaining: options.creditsRemaining ?? 1_000,
    },
  };
}

/** `n` records with ids `<prefix>-0`…, as the service lists them. */
export const records = (n: number, prefix = 'record') =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}` }));

/** The service's failure body (spec section 7). */
export function failure(code: string, message = code) {
  return { success: false, error: { code, message }, meta: { requestId: 'req-1' } };
}

/**
 * undici's MockAgent standing in for the Business-Signals service, with the gateway's real
 * transport over it: no network (`disableNetConnect`), every request sent recorded. A test
 * declares the answers (`service.pool.intercept(...)`), composes the policy under test on
 * `service.transport`, counts `service.sent()` and ends with `service.done()`, which also checks
 * that every answer declared was asked for.
 */
export function mockService(options: { timeoutMs?: number } = {}) {
  const agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  const transport = createTransport({
    baseUrl: SERVICE,
    timeoutMs: options.timeoutMs ?? 5_000,
    dispatcher: agent,
  });
  return {
    agent,
    pool: agent.get(SERVICE),
    transport: transport.call as UpstreamCall,
    /** The requests that reached the service, in order: `/v1/companies?limit=5`... */
    sent(): string[] {
      const calls = agent.getCallHistory()?.calls() ?? [];
      return calls.map((call) => call.fullUrl.slice(SERVICE.length));
    },
    /** Checks that every answer declared was used, and closes the agent. */
    async done(): Promise<void> {
      agent.assertNoPendingInterceptors();
      await agent.close();
    },
  };
}

/** A page request as a policy sees it: the companies list, 5 records, key `key`, a fresh ledger. */
export function pageRequest(overrides: Partial<UpstreamRequest> = {}): UpstreamRequest {
  return {
    endpoint: 'companies' as EndpointName,
    filterQuery: '',
    cursor: null,
    limit: 5,
    skip: 0,
    apiKey: 'key',
    ledger: new CreditLedger(),
    ...overrides,
  };
}

/**
 * Answers held until released, for what is in flight at once: `reply` is a MockAgent reply
 * callback whose body waits; `inFlight()` counts the requests waiting, `maxInFlight()` the most
 * there were at once.
 */
export function heldAnswers(body: () => unknown = () => envelope([])) {
  const waiting: (() => void)[] = [];
  let inFlight = 0;
  let most = 0;
  return {
    reply: () => {
      inFlight++;
      most = Math.max(most, inFlight);
      return new Promise((resolve) =>
        waiting.push(() => {
          inFlight--;
          resolve(body());
        }),
      );
    },
    releaseOne: () => waiting.shift()?.(),
    /** Releases every answer held, and those asked for later, until `promise` settles. */
    async releaseUntil<T>(promise: Promise<T>): Promise<T> {
      let settled = false;
      const done = () => (settled = true);
      promise.then(done, done);
      while (!settled) {
        waiting.splice(0).forEach((release) => release());
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      return promise;
    },
    inFlight: () => inFlight,
    maxInFlight: () => most,
  };
}

/** Resolves once the requests already started have reached the service (a few event-loop turns). */
export const aFewTurns = () => new Promise((resolve) => setTimeout(resolve, 20));
