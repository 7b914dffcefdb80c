import { ApiError } from './api-error.js';

/** The settings of a workspace; omitted fields take the defaults shown. */
export interface WorkspaceSpec {
  /** Credits at start and after reset (default 1,000,000). */
  credits?: number;
  /** Requests allowed per fixed one-second window (default: unlimited). */
  ratePerSecond?: number;
  /** Every request answered FORBIDDEN (default false). */
  blocked?: boolean;
  /**
   * An existing key whose workspace the new key joins (its credits and limits), as a workspace
   * holds several keys in the service; the other settings are then ignored.
   */
  sameWorkspaceAs?: string;
}

/** A workspace's live state. */
export interface Workspace {
  readonly id: string;
  readonly initialCredits: number;
  readonly ratePerSecond: number | null;
  readonly blocked: boolean;
  credits: number;
  windowStart: number;
  windowCount: number;
}

/** The built-in keys and their workspaces. */
export const BUILT_IN_KEYS = {
  demo: { key: 'demo-key', workspace: 'ws_demo', spec: { credits: 1e12 } },
  lowCredit: { key: 'low-credit-key', workspace: 'ws_low_credit', spec: { credits: 5 } },
  noCredit: { key: 'no-credit-key', workspace: 'ws_no_credit', spec: { credits: 0 } },
  rateLimited: {
    key: 'rate-limited-key',
    workspace: 'ws_rate_limited',
    spec: { credits: 1e6, ratePerSecond: 2 },
  },
  blocked: { key: 'blocked-key', workspace: 'ws_blocked', spec: { credits: 1e6, blocked: true } },
} as const satisfies Record<string, { key: string; workspace: string; spec: WorkspaceSpec }>;

const WINDOW_MS = 1000;

/**
 * The key → workspace table with credits and rate-limit windows. Keys stay in
 * here: nothing else in the sandbox sees or logs them.
 */
export class Workspaces {
  readonly #byKey = new Map<string, Workspace>();
  /** Keys taken out by {@link revoke}: refused, and still kept out of the request log. */
  readonly #revoked = new Set<string>();
  #added = 0;

  constructor() {
    for (const { key, workspace, spec } of Object.values(BUILT_IN_KEYS))
      this.#register(key, workspace, spec);
  }

  #register(key: string, id: string, spec: WorkspaceSpec): Workspace {
    const credits = spec.credits ?? 1_000_000;
    if (!Number.isSafeInteger(credits) || credits < 0)
      throw new RangeError('credits must be a non-negative integer');
    const rate = spec.ratePerSecond ?? null;
    if (rate !== null && (!Number.isInteger(rate) || rate < 1))
      throw new RangeError('ratePerSecond must be a positive integer');
    const workspace: Workspace = {
      id,
      initialCredits: credits,
      ratePerSecond: rate,
      blocked: spec.blocked ?? false,
      credits,
      windowStart: 0,
      windowCount: 0,
    };
    this.#byKey.set(key, workspace);
    return workspace;
  }

  /**
   * Adds a key with a fresh workspace (or that of `spec.sameWorkspaceAs`) and returns the
   * workspace id.
   *
   * @throws Error when the key exists, or `sameWorkspaceAs` does not; RangeError for bad settings.
   */
  add(key: string, spec: WorkspaceSpec = {}): string {
    if (key === '' || this.#byKey.has(key))
      throw new Error('addKey: the key is empty or already exists');
    if (spec.sameWorkspaceAs !== undefined) {
      const shared = this.#byKey.get(spec.sameWorkspaceAs);
      if (!shared) throw new Error('addKey: sameWorkspaceAs names no key');
      this.#revoked.delete(key);
      this.#byKey.set(key, shared);
      return shared.id;
    }
    this.#added += 1;
    this.#revoked.delete(key);
    return this.#register(key, `ws_custom_${this.#added}`, spec).id;
  }

  /**
   * Takes a key out, as the service does with a revoked key: its requests get 401 UNAUTHORIZED
   * from now on, reset or not. `add` may add it again, with a fresh workspace.
   *
   * @throws Error when the key is not a current key.
   */
  revoke(key: string): void {
    if (!this.#byKey.delete(key)) throw new Error('revokeKey: no such key');
    this.#revoked.add(key);
  }

  /** Whether a string is a key, current or revoked (used to keep keys out of the request log). */
  isKey(text: string): boolean {
    return this.#byKey.has(text) || this.#revoked.has(text);
  }

  /** The workspace of a key, or undefined. */
  find(key: string): Workspace | undefined {
    return this.#byKey.get(key);
  }

  /**
   * The workspace allowed to make this request.
   *
   * @throws ApiError UNAUTHORIZED for a missing or unknown key, FORBIDDEN for a blocked workspace.
   */
  authenticate(key: string | undefined): Workspace {
    if (key === undefined || key === '') {
      throw new ApiError('UNAUTHORIZED', 'missing API key: send it in the X-API-Key header');
    }
    const workspace = this.#byKey.get(key);
    if (!workspace)
      throw new ApiError(
        'UNAUTHORIZED',
        'invalid API key: the X-API-Key header names no workspace',
      );
    if (workspace.blocked) {
      throw new ApiError(
        'FORBIDDEN',
        'request blocked by abuse prevention policy for this workspace',
      );
    }
    return workspace;
  }

  /**
   * Counts a request against the workspace's fixed one-second window.
   *
   * @throws ApiError TOO_MANY_REQUESTS, with the whole seconds until the window ends (at least 1).
   */
  admit(workspace: Workspace, now: number): void {
    if (workspace.ratePerSecond === null) return;
    if (now - workspace.windowStart >= WINDOW_MS) {
      workspace.windowStart = now;
      workspace.windowCount = 0;
    }
    if (workspace.windowCount >= workspace.ratePerSecond) {
      const retryAfter = Math.max(1, Math.ceil((workspace.windowStart + WINDOW_MS - now) / 1000));
      throw new ApiError(
        'TOO_MANY_REQUESTS',
        `rate limit exceeded: ${workspace.ratePerSecond} requests per second for this workspace; retry after ${retryAfter} s`,
        retryAfter,
      );
    }
    workspace.windowCount += 1;
  }

  /** Restores every workspace's credits and clears the rate-limit windows. Added keys stay. */
  reset(): void {
    for (const workspace of this.#byKey.values()) {
      workspace.credits = workspace.initialCredits;
      workspace.windowStart = 0;
      workspace.windowCount = 0;
    }
  }
}
