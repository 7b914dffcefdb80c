import type { Kind } from '../../config/setting.js';

/** The windows a quota may be stated over, in seconds. */
export const QUOTA_WINDOWS = { minute: 60, hour: 3_600, day: 86_400 } as const;

/**
 * A principal's credit quota: a bucket of `credits`, refilled continuously at `credits` per
 * `windowSeconds` (`5000/hour`: 5000 credits, about 1.39 per second).
 */
export interface CreditQuota {
  readonly credits: number;
  readonly windowSeconds: number;
}

const QUOTA_PATTERN = /^\s*(\d{1,12})\s*\/\s*(minute|hour|day)\s*$/;

/** Reads `<credits>/<minute|hour|day>`, e.g. `5000/hour`; null for anything else (or 0 credits). */
export function parseCreditQuota(text: unknown): CreditQuota | null {
  if (typeof text !== 'string') return null;
  const match = QUOTA_PATTERN.exec(text);
  if (!match) return null;
  const credits = Number(match[1]);
  if (credits < 1) return null;
  return { credits, windowSeconds: QUOTA_WINDOWS[match[2] as 'minute' | 'hour' | 'day'] };
}

/** Credits a quota gives back per second. */
export function restoreRate(quota: CreditQuota): number {
  return quota.credits / quota.windowSeconds;
}

/** The setting kind of a quota: `5000/hour`, `100/minute`, `20000/day`. */
export function creditQuota(): Kind<CreditQuota> {
  return {
    parse(raw) {
      const quota = parseCreditQuota(raw);
      if (!quota) {
        throw new Error(
          `must be <credits>/<minute|hour|day> with at least 1 credit, e.g. "5000/hour" (got "${raw.trim().slice(0, 40)}")`,
        );
      }
      return quota;
    },
  };
}
