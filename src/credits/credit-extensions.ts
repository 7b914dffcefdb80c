import type { CreditBudget } from './credit-budget.js';
import type { CreditLedger } from './credit-ledger.js';
import type { QuotaReport } from './quota-account.js';

/**
 * What an operation's money came to, as `extensions.credits` reports it: the one shape every door
 * answers with (a run over HTTP or WebSocket, a kept answer, a subscription's payload), from which
 * the credit headers, the operation report, its log line and its trace are read. A field added
 * here is added to all of them (see {@link creditLogFields}).
 */
export interface CreditFigures {
  /** Credits the service charged this operation (a payload: what it cost its subscription). */
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
   * Present when an upstream attempt timed out, or was given up once sent (its client gone, the
   * deadline passed): the credits the service may have charged for it without the gateway knowing
   * (up to its page's limit), counted against the budget and the quota too.
   */
  uncertain?: number;
  /** A subscription's payload: what the subscription has spent so far, this payload included. */
  spent?: number;
  /** A subscription's payload: what it may still spend. */
  left?: number;
  /**
   * The caller's credit quota (`CREDIT_QUOTA` or its token's), when one applies: the bucket's
   * size, the credits left once this operation was settled, and the credits restored per second.
   */
  quota?: { limit: number; remaining: number; restoreRate: number };
}

/** A page served past its TTL because the service was down, as `extensions.stale` lists it. */
export interface StaleFigure {
  endpoint: string;
  /** How long ago the service sent it, in seconds, to a tenth. */
  ageSeconds: number;
}

/** What every result reports in `extensions`. */
export interface CreditExtensions {
  credits: CreditFigures;
  upstreamRequests: number;
  /** Of those, the ones sent again after a transient fault or a short 429. */
  upstreamRetries: number;
  /**
   * Present when pages past their TTL were served because the service was down
   * (`CACHE_STALE_SECONDS`): one entry per page, in the order served. Their credits are in
   * `credits.saved`.
   */
  stale?: StaleFigure[];
}

/** The quota as `extensions.credits.quota` shows it. */
export function quotaFigures({ limit, remaining, restoreRate }: QuotaReport) {
  return { limit, remaining, restoreRate };
}

/** The extensions of a result that never reached execution (a syntax or validation error). */
export const NOTHING_SPENT: CreditExtensions = Object.freeze({
  credits: Object.freeze({ used: 0, saved: 0, remaining: null, estimate: null, budget: null }),
  upstreamRequests: 0,
  upstreamRetries: 0,
});

/** An operation's extensions, from its ledger and budget, and its quota as settled. */
export function operationCredits(
  ledger: CreditLedger,
  budget: CreditBudget,
  quota: QuotaReport | null | undefined,
): CreditExtensions {
  return {
    credits: {
      used: ledger.used,
      saved: ledger.saved,
      remaining: ledger.remaining,
      estimate: budget.estimate,
      budget: budget.budget,
      ...(ledger.uncertain > 0 ? { uncertain: ledger.uncertain } : {}),
      ...(quota ? { quota: quotaFigures(quota) } : {}),
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
}

/** What a kept answer sent again reports: nothing used, its pages' worth saved. */
export function keptCredits(
  kept: { credits: number; estimate: number },
  budget: number,
  remaining: number | null,
  quota: QuotaReport | null,
): CreditExtensions {
  return {
    credits: {
      used: 0,
      saved: kept.credits,
      remaining,
      estimate: kept.estimate,
      budget,
      ...(quota ? { quota: quotaFigures(quota) } : {}),
    },
    upstreamRequests: 0,
    upstreamRetries: 0,
  };
}

/**
 * What a subscription reports: each payload, what it cost and what the subscription has spent and
 * left; and the subscription, once it ends, its payloads summed.
 */
export function subscriptionCredits(figures: {
  used: number;
  saved: number;
  requests: number;
  retries: number;
  estimate: number;
  budget: number;
  spent: number;
  left: number;
  remaining: number | null;
  quota: QuotaReport | undefined;
}): CreditExtensions {
  const { quota } = figures;
  return {
    credits: {
      used: figures.used,
      saved: figures.saved,
      remaining: figures.remaining,
      estimate: figures.estimate,
      budget: figures.budget,
      spent: figures.spent,
      left: figures.left,
      ...(quota ? { quota: quotaFigures(quota) } : {}),
    },
    upstreamRequests: figures.requests,
    upstreamRetries: figures.retries,
  };
}

/**
 * The same figures as response headers, for whatever drops `extensions` on the way (a federation
 * router keeps a subgraph's data, not its extensions): `X-Credits-Used`, `X-Credits-Saved`, and
 * `X-Credits-Remaining` when the service reported it.
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
 * Sets {@link CREDIT_HEADERS} for `credits`, and with a quota {@link QUOTA_HEADERS}' `RateLimit`
 * pair: on a Fetch response, or (as `{ set }`) on node's, for an answer sent without Yoga.
 */
export function setCreditHeaders(
  headers: { set(name: string, value: string): unknown },
  credits: CreditFigures,
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

/**
 * The credit figures of an operation's log line and trace, from its extensions: every number of
 * `credits` as `credits<Name>` (`creditsUsed`, `creditsSaved`, `creditsEstimate`...), the
 * estimate even when null, 0 left out for `uncertain`; the upstream requests and retries; `stale`
 * as the count of stale pages, when any.
 */
export function creditLogFields(extensions: CreditExtensions): Record<string, number | null> {
  const fields: Record<string, number | null> = {
    upstreamRequests: extensions.upstreamRequests,
    upstreamRetries: extensions.upstreamRetries,
  };
  const credits = extensions.credits as unknown as Record<string, unknown>;
  for (const name in credits) {
    const value = credits[name];
    if (typeof value !== 'number' && !(value === null && name === 'estimate')) continue;
    fields[logFieldName(name)] = value;
  }
  if (extensions.stale?.length) fields['stale'] = extensions.stale.length;
  return fields;
}

/** `credits<Name>` by figure name (the fixed names of `CreditFigures`), each made once. */
const LOG_FIELD_NAMES = new Map<string, string>();

function logFieldName(name: string): string {
  let field = LOG_FIELD_NAMES.get(name);
  if (field === undefined) {
    field = `credits${name[0]!.toUpperCase()}${name.slice(1)}`;
    LOG_FIELD_NAMES.set(name, field);
  }
  return field;
}
