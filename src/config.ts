/** Everything the gateway reads from its environment, parsed and checked once at boot. */
export interface Config {
  /** Port the GraphQL server listens on (`PORT`, default 4000). */
  port: number;
  /** Interface to bind (`HOST`, default 0.0.0.0). */
  host: string;
  /** Base URL of the Business-Signals service (`UPSTREAM_URL`); null starts the sandbox. */
  upstreamUrl: string | null;
  /** Per upstream request: time allowed for headers, and again for the body (`UPSTREAM_TIMEOUT_MS`). */
  upstreamTimeoutMs: number;
  /** Keep-alive connections to the upstream (`UPSTREAM_CONNECTIONS`). */
  upstreamConnections: number;
  /** Upstream requests one operation may have in flight at once (`UPSTREAM_CONCURRENCY`). */
  upstreamConcurrency: number;
  /** Page size when a connection gets no `first` (`DEFAULT_PAGE_SIZE`, default 20). */
  defaultPageSize: number;
  /** Largest `first` served, by chaining upstream pages (`MAX_PAGE_SIZE`, default 500). */
  maxPageSize: number;
  /** Key that signs connection cursors (`CURSOR_SECRET`); set it in production. */
  cursorSecret: string;
  /** Largest request body accepted, in bytes (`MAX_REQUEST_BYTES`); above it: HTTP 413. */
  maxRequestBytes: number;
}

export const DEFAULT_CURSOR_SECRET = 'business-signals-gateway/cursor/v1';

/** Defaults, also used by tests that build a config by hand. */
export const defaultConfig: Config = {
  port: 4000,
  host: '0.0.0.0',
  upstreamUrl: null,
  upstreamTimeoutMs: 10_000,
  upstreamConnections: 64,
  upstreamConcurrency: 32,
  defaultPageSize: 20,
  maxPageSize: 500,
  cursorSecret: DEFAULT_CURSOR_SECRET,
  maxRequestBytes: 1_000_000,
};

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return value;
}

/** Reads the config from `env`; throws a message naming the variable on a bad value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const upstreamUrl = env.UPSTREAM_URL?.trim() || null;
  if (upstreamUrl !== null) {
    let url: URL;
    try {
      url = new URL(upstreamUrl);
    } catch {
      throw new Error(`UPSTREAM_URL must be an absolute http(s) URL (got "${upstreamUrl}")`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new Error(`UPSTREAM_URL must use http or https (got "${url.protocol}")`);
    }
  }
  const maxPageSize = int(env, 'MAX_PAGE_SIZE', defaultConfig.maxPageSize, 1, 10_000);
  return {
    port: int(env, 'PORT', defaultConfig.port, 0, 65_535),
    host: env.HOST?.trim() || defaultConfig.host,
    upstreamUrl,
    upstreamTimeoutMs: int(env, 'UPSTREAM_TIMEOUT_MS', defaultConfig.upstreamTimeoutMs, 1, 600_000),
    upstreamConnections: int(
      env,
      'UPSTREAM_CONNECTIONS',
      defaultConfig.upstreamConnections,
      1,
      4096,
    ),
    upstreamConcurrency: int(
      env,
      'UPSTREAM_CONCURRENCY',
      defaultConfig.upstreamConcurrency,
      1,
      1024,
    ),
    defaultPageSize: int(env, 'DEFAULT_PAGE_SIZE', defaultConfig.defaultPageSize, 1, maxPageSize),
    maxPageSize,
    cursorSecret: env.CURSOR_SECRET || defaultConfig.cursorSecret,
    maxRequestBytes: int(
      env,
      'MAX_REQUEST_BYTES',
      defaultConfig.maxRequestBytes,
      1_000,
      100_000_000,
    ),
  };
}
