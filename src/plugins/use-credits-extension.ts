import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import type { QuotaReport } from './use-credit-quota.js';

/** What every response reports in `extensions`. */
export interface CreditExtensions {
  credits: {
    /** Credits the service charged this operation. */
    used: number;
    /** Credits the pages served from the cache or by joining another request would have cost. */
    saved: number;
    /** The workspace's credits left, from the freshest response; null without one. */
    remaining: number | null;
    /** What the operation was expected to cost, estimated before it ran; null when it never ran. */
    estimate: number | null;
    /** The credits the operation was allowed (it never spends more); null when it never ran. */
    budget: number | null;
    /**
     * Present when an upstream attempt timed out: the credits the service may have charged for it
     * without the gateway knowing (up to its page's limit), counted against the budget too.
     */
    uncertain?: number;
    /**
     * The caller's credit quota (`CREDIT_QUOTA` or its token's), when one applies: the bucket's
     * size, the credits left once this operation was settled, and the credits restored per second.
     */
    quota?: { limit: number; remaining: number; restoreRate: number };
  };
  upstreamRequests: number;
  /** Of those, the ones sent again after a transient fault or a short 429. */
  upstreamRetries: number;
  /**
   * Present when pages past their TTL were served because the service was down
   * (`CACHE_STALE_SECONDS`): one entry per page, in the order served, with its endpoint and how
   * long ago the service sent it (seconds, to a tenth). Their credits are in `credits.saved`.
   */
  stale?: { endpoint: string; ageSeconds: number }[];
}

/** The quota as `extensions.credits.quota` shows it. */
export function quotaFigures({ limit, remaining, restoreRate }: QuotaReport) {
  return { limit, remaining, restoreRate };
}

const NOTHING_SPENT: CreditExtensions = {
  credits: { used: 0, saved: 0, remaining: null, estimate: null, budget: null },
  upstreamRequests: 0,
  upstreamRetries: 0,
};

/**
 * The same figures as response headers, for whatever drops `extensions` on the way (a federation
 * router keeps a subgraph's data, not its extensions): `X-Credits-Used`, `X-Credits-Saved`, and
 * `X-Credits-Remaining` when the service reported it. A router that forwards them from every
 * subgraph request sends a list, one value per request (README, Clients).
 */
export const CREDIT_HEADERS = ['X-Credits-Used', 'X-Credits-Saved', 'X-Credits-Remaining'] as const;

/**
 * The caller's quota as draft-ietf-httpapi-ratelimit-headers (09) writes it, under the policy name
 * `"credits"`: `RateLimit-Policy: "credits";q=<limit>;w=<window s>` and
 * `RateLimit: "credits";r=<remaining>;t=<s until the bucket is full again>`; with a 429,
 * `Retry-After`. Exposed to browsers through CORS.
 */
export const QUOTA_HEADERS = ['RateLimit-Policy', 'RateLimit', 'Retry-After'] as const;

/**
 * Adds `extensions.credits` ({ used, saved, remaining, estimate, budget }) and `extensions.upstreamRequests` to every
 * result (and `extensions.stale` when pages were served stale): from the operation's ledger after execution, and as zero for requests that never reached
 * execution (a syntax or validation error). Sets {@link CREDIT_HEADERS} on the response.
 */
export function useCreditsExtension(): Plugin {
  const spent = new WeakMap<Request, CreditExtensions['credits']>();
  return {
    // A subscription's payloads: what each cost it, and what the subscription has spent and left.
    onSubscribe({ args }) {
      const { live } = args.contextValue as Partial<Context>;
      if (!live) return undefined;
      return {
        onSubscribeResult: () => ({
          onNext({ result, setResult }) {
            const figures = live.report();
            if (!figures) return;
            const { upstreamRequests, quota, ...credits } = figures;
            setResult({
              ...result,
              extensions: {
                ...result.extensions,
                credits: { ...credits, ...(quota ? { quota: quotaFigures(quota) } : {}) },
                upstreamRequests,
              },
            });
          },
        }),
      };
    },
    onExecutionResult({ result, setResult, context }) {
      const upstream = (context as Partial<Context>).upstream;
      if (!upstream || !result || Symbol.asyncIterator in result) return;
      const { ledger, budget } = upstream;
      const { quota } = context as Partial<Context>;
      const { limit = 0, remaining = 0, restoreRate = 0 } = quota ?? {};
      const extensions: CreditExtensions = {
        credits: {
          used: ledger.used,
          saved: ledger.saved,
          remaining: ledger.remaining,
          estimate: budget.estimate,
          budget: budget.budget,
          ...(ledger.uncertain > 0 ? { uncertain: ledger.uncertain } : {}),
          ...(quota ? { quota: { limit, remaining, restoreRate } } : {}),
        },
        upstreamRequests: ledger.requests,
        upstreamRetries: ledger.retries,
        ...(ledger.stale.length > 0
          ? {
              stale: ledger.stale.map(({ endpoint, ageMs }) => ({
                endpoint,
                ageSeconds: Math.round(ageMs / 100) / 10,
              })),
            }
          : {}),
      };
      setResult({ ...result, extensions: { ...result.extensions, ...extensions } });
    },
    onResultProcess({ request, result, setResult }) {
      if (Array.isArray(result) || Symbol.asyncIterator in result) return;
      const extensions = result.extensions as Partial<CreditExtensions> | undefined;
      if (extensions?.credits) {
        spent.set(request, extensions.credits);
        return;
      }
      setResult({ ...result, extensions: { ...result.extensions, ...NOTHING_SPENT } });
    },
    onResponse({ request, response }) {
      const credits = spent.get(request);
      if (credits) setCreditHeaders(response.headers, credits);
    },
  };
}

/**
 * Sets {@link CREDIT_HEADERS} for `credits`, and with a quota {@link QUOTA_HEADERS}' `RateLimit`
 * pair: on a Fetch response, or (as `{ set }`) on node's, for an answer sent without Yoga.
 */
export function setCreditHeaders(
  headers: { set(name: string, value: string): unknown },
  credits: CreditExtensions['credits'],
): void {
  headers.set('x-credits-used', String(credits.used));
  headers.set('x-credits-saved', String(credits.saved));
  if (credits.remaining !== null) headers.set('x-credits-remaining', String(credits.remaining));
  if (credits.quota) {
    const { limit, remaining, restoreRate } = credits.quota;
    // The window the quota is given over: its credits over the rate they come back at.
    const window = Math.round(limit / restoreRate);
    const full = Math.ceil((limit - remaining) / restoreRate);
    headers.set('ratelimit-policy', `"credits";q=${limit};w=${window}`);
    headers.set('ratelimit', `"credits";r=${remaining};t=${Math.max(0, full)}`);
  }
}
