import { availableParallelism } from 'node:os';
import { integer, integerOrAuto, list, oneOf, origin, string, url } from './config/kinds.js';
import { parseSettings, type SettingValues } from './config/parse-settings.js';
import { setting } from './config/setting.js';
import { trustedDocuments } from './config/trusted-documents.js';
import { UPSTREAM_MAX_LIMIT } from './upstream/build-query.js';
import { RETRY_BUDGET } from './upstream/retry-budget.js';
import {
  AUTH_MODES,
  authSettingsProblems,
  jwtAlgorithms,
  publicKeyPem,
  type JwtAlgorithm,
} from './auth/auth-mode.js';
import { upstreamKeysFile } from './auth/upstream-keys.js';
import { creditQuota } from './credits/quota/credit-quota.js';

/**
 * The deepest nesting of `{`, `[` and `(` together that a document may have to be parsed at all
 * (graphql-js's parser is recursive; `useParserLimits` refuses deeper ones): `MAX_DEPTH`, which
 * counts fields, can be set up to it, not beyond.
 */
export const PARSER_MAX_DEPTH = 64;

export const DEFAULT_CURSOR_SECRET = 'business-signals-gateway/cursor/v1';

/** The `service.name` of the gateway's spans unless `OTEL_SERVICE_NAME` (or the resource) says. */
export const DEFAULT_SERVICE_NAME = 'business-signals-gateway';

/** The OTLP encodings the gateway exports traces in (`OTEL_EXPORTER_OTLP_PROTOCOL`). */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;

/**
 * Every setting the gateway reads from its environment, each declared once: the `Config` property
 * it fills, then its variable, kind, default and description. `Config`, `defaultConfig`,
 * `loadConfig` and the configuration table of docs/operations.md (`npm run config:table`, in this
 * order) come from here.
 */
export const settings = {
  upstreamUrl: setting(
    'UPSTREAM_URL',
    url(),
    null,
    'base URL of the Business-Signals service (a path prefix before `/v1` is kept)',
    { shownDefault: '_(unset: start sandbox)_' },
  ),
  port: setting('PORT', integer(0, 65_535), 4000, 'port of the GraphQL server'),
  host: setting('HOST', string(), '0.0.0.0', 'interface to bind'),
  sandboxPort: setting(
    'SANDBOX_PORT',
    integer(0, 65_535),
    4500,
    'port of the in-process sandbox when `UPSTREAM_URL` is unset',
  ),
  sandboxTrickleSeconds: setting(
    'SANDBOX_TRICKLE_SECONDS',
    integer(0, 86_400),
    20,
    'seconds between the events the in-process sandbox adds (a funding round, an executive move or an acquisition, discovered now), so that subscriptions show live data; 0 adds none',
  ),
  upstreamTimeoutMs: setting(
    'UPSTREAM_TIMEOUT_MS',
    integer(1, 600_000),
    10_000,
    'per upstream request: time allowed from sending it to the end of the response body (each retry gets its own)',
  ),
  upstreamConnections: setting(
    'UPSTREAM_CONNECTIONS',
    integer(1, 4096),
    64,
    'keep-alive connections to the upstream',
  ),
  upstreamRetries: setting(
    'UPSTREAM_RETRIES',
    integer(0, 10),
    2,
    `retries of an upstream request after a transient fault (connection refused or reset, timeout, 500/502/503/504), with jittered backoff, within a retry budget of ${RETRY_BUDGET.ratio * 100}% of requests`,
  ),
  retryAfterMaxMs: setting(
    'RETRY_AFTER_MAX_MS',
    integer(0, 60_000),
    2_000,
    'the longest `Retry-After` of a 429 the gateway waits out (once) before retrying; a longer one answers `TOO_MANY_REQUESTS` at once',
  ),
  breakerFailures: setting(
    'BREAKER_FAILURES',
    integer(1, 10_000),
    5,
    'failures of the service in a row (timeouts, refused or reset connections, 5xx, malformed bodies; each attempt counts) that open the circuit breaker',
  ),
  breakerOpenMs: setting(
    'BREAKER_OPEN_MS',
    integer(100, 600_000),
    5_000,
    'how long the open breaker fails calls at once (`UPSTREAM_UNAVAILABLE` with `retryAfter`) before one probe may go',
  ),
  operationTimeoutMs: setting(
    'OPERATION_TIMEOUT_MS',
    integer(100, 600_000),
    30_000,
    "an operation's deadline, from its first upstream request: then its requests are aborted and the fields still open fail `OPERATION_TIMEOUT`",
  ),
  shutdownGraceMs: setting(
    'SHUTDOWN_GRACE_MS',
    integer(0, 600_000),
    25_000,
    "on SIGTERM or SIGINT, how long operations in flight may take to finish before their connections are closed (keep it below the orchestrator's own grace period)",
  ),
  upstreamConcurrency: setting(
    'UPSTREAM_CONCURRENCY',
    integer(1, 1024),
    32,
    'upstream requests one operation may have in flight at once (fan-out of nested connections)',
  ),
  defaultPageSize: setting(
    'DEFAULT_PAGE_SIZE',
    integer(1, 'MAX_PAGE_SIZE'),
    20,
    '`first` when a connection gets none',
  ),
  maxPageSize: setting(
    'MAX_PAGE_SIZE',
    integer(1, 10_000),
    500,
    `largest \`first\`; above ${UPSTREAM_MAX_LIMIT} the gateway chains upstream pages`,
  ),
  creditBudgetDefault: setting(
    'CREDIT_BUDGET_DEFAULT',
    integer(0, 'CREDIT_BUDGET_MAX'),
    1_000,
    'credits one operation may spend when its request sends no `X-Credit-Budget`; an operation whose estimate is above its budget is refused before it spends',
  ),
  creditBudgetMax: setting(
    'CREDIT_BUDGET_MAX',
    integer(0, 100_000_000),
    10_000,
    'the largest budget a request may ask for in `X-Credit-Budget` (a larger one is lowered to it)',
  ),
  pollIntervalSeconds: setting(
    'POLL_INTERVAL_SECONDS',
    integer(1, 86_400),
    30,
    'subscriptions: how often each poller asks the service for events newer than the last it saw (one poller per workspace, endpoint and filters, shared by their subscribers)',
  ),
  maxPollersPerKey: setting(
    'MAX_POLLERS_PER_KEY',
    integer(1, 100_000),
    20,
    "subscriptions: pollers (distinct lists and filters) one upstream key may have at once per instance; a subscription needing one more is refused with `TOO_MANY_SUBSCRIPTIONS` (one with a running poller's filters always fits). 20 pollers at the default interval poll 0.67 times a second, within `POLL_REQUESTS_PER_SECOND`",
  ),
  pollRequestsPerSecond: setting(
    'POLL_REQUESTS_PER_SECOND',
    integer(1, 1_000),
    1,
    "subscriptions: upstream requests per second the polls and catch-ups of one upstream key may send, per instance: past it pollers wait their turn (poll less often), leaving the key's rate limit to its queries. A 429 on a poll pauses every poller of the key for its `Retry-After` (else 1 s, doubling)",
  ),
  subscriptionBudgetDefault: setting(
    'SUBSCRIPTION_BUDGET_DEFAULT',
    integer(0, 'CREDIT_BUDGET_MAX'),
    1_000,
    'credits one subscription may spend (a credit per record delivered, plus any nested lookups) when it sends no `X-Credit-Budget`; then it ends with `CREDIT_BUDGET_EXHAUSTED`',
  ),
  maxSubscriptionsPerPrincipal: setting(
    'MAX_SUBSCRIPTIONS_PER_PRINCIPAL',
    integer(1, 100_000),
    100,
    "subscriptions one principal (an API key; a token's workspace and subject) may have open on one instance, over SSE and WebSocket together; one more is refused with `TOO_MANY_SUBSCRIPTIONS` before it starts anything",
  ),
  maxSubscriptionsPerConnection: setting(
    'MAX_SUBSCRIPTIONS_PER_CONNECTION',
    integer(1, 'MAX_SUBSCRIPTIONS_PER_PRINCIPAL'),
    25,
    'subscriptions one WebSocket connection may have open at once; one more is refused with `TOO_MANY_SUBSCRIPTIONS`',
  ),
  alerts: setting(
    'ALERTS',
    oneOf('on', 'off'),
    'on',
    'alerts: saved subscriptions delivered to webhooks (`createAlert`); `off` serves no alert mutation and runs none',
  ),
  alertsDataDir: setting(
    'ALERTS_DATA_DIR',
    string(),
    'data',
    'directory of the embedded alerts file (`alerts.sqlite`, SQLite) when `REDIS_URL` is unset; with it, alerts and their deliveries live in Redis',
  ),
  alertsMaxPerPrincipal: setting(
    'ALERTS_MAX_PER_PRINCIPAL',
    integer(1, 10_000),
    20,
    'alerts one principal may have; one more is refused with `TOO_MANY_SUBSCRIPTIONS` (`scope: "alerts"`)',
  ),
  alertDailyBudgetDefault: setting(
    'ALERT_DAILY_BUDGET_DEFAULT',
    integer(1, 'CREDIT_BUDGET_MAX'),
    1_000,
    'credits an alert may spend per day (UTC) when it is made without `dailyBudget`; once spent, its deliveries wait for the next day (none is lost)',
  ),
  alertDeliveryTimeoutMs: setting(
    'ALERT_DELIVERY_TIMEOUT_MS',
    integer(100, 120_000),
    10_000,
    "each attempt at a delivery: from connecting to the receiver's answer; past it, the attempt failed",
  ),
  alertRetrySeconds: setting(
    'ALERT_RETRY_SECONDS',
    integer(1, 604_800),
    86_400,
    'how long a delivery is retried (exponential backoff with jitter) before it is given up',
  ),
  alertRetryBaseMs: setting(
    'ALERT_RETRY_BASE_MS',
    integer(10, 3_600_000),
    30_000,
    "a delivery's first retry after about this long; each next one waits twice as long, at most an hour",
  ),
  alertDisableAfter: setting(
    'ALERT_DISABLE_AFTER',
    integer(1, 10_000),
    20,
    'deliveries given up in a row that disable their alert (its reason readable in the graph)',
  ),
  alertPrivateTargets: setting(
    'ALERT_PRIVATE_TARGETS',
    oneOf('auto', 'on', 'off'),
    'auto',
    '`on` lets webhooks reach loopback, private and link-local addresses and `http://` URLs (tests, local receivers); `auto` does so only while the gateway serves the sandbox (`UPSTREAM_URL` unset); `off` never',
  ),
  maxUpstreamRequests: setting(
    'MAX_UPSTREAM_REQUESTS',
    integer(1, 1_000_000),
    1_000,
    'upstream requests one operation may send, counted before it runs by the estimate (a lookup that finds nothing counts too, though it costs no credit) and enforced while it runs',
  ),
  maxResponseRecords: setting(
    'MAX_RESPONSE_RECORDS',
    integer(1, 100_000_000),
    10_000,
    'the most records (embedded ones included) an answer may hold by the estimate; a larger one is refused before it runs',
  ),
  maxRequestBytes: setting(
    'MAX_REQUEST_BYTES',
    integer(1_000, 100_000_000),
    1_000_000,
    'largest request body accepted; above it, HTTP 413',
  ),
  maxDepth: setting(
    'MAX_DEPTH',
    integer(1, PARSER_MAX_DEPTH),
    16,
    "deepest nesting of fields in an operation (a connection's `edges { node }` counts two levels)",
  ),
  maxAliases: setting(
    'MAX_ALIASES',
    integer(0, 1_000),
    20,
    'most aliases in an operation, fragments included (`__typename` aliases not counted)',
  ),
  maxTokens: setting(
    'MAX_TOKENS',
    integer(1_000, 100_000),
    5_000,
    'most lexical tokens in a document (comments not counted); parsing stops there',
  ),
  maxDirectives: setting(
    'MAX_DIRECTIVES',
    integer(0, 1_000),
    50,
    'most directives in an operation, fragments included',
  ),
  cacheTtlSeconds: setting(
    'CACHE_TTL_SECONDS',
    integer(0, 86_400),
    60,
    'how long an upstream page is served again from the cache, per API key (repeats cost no credits); 0 turns the cache off, and the joining of concurrent requests with it',
    { see: 'The page cache' },
  ),
  cacheStaleSeconds: setting(
    'CACHE_STALE_SECONDS',
    integer(0, 86_400),
    300,
    'how long past its TTL a cached page is kept, to answer in its place when the service is down (5xx, timeout, refused or reset connection, breaker open; never a 4xx), for no credit and listed in `extensions.stale`; `Cache-Control: no-cache` refuses it. 0 turns it off',
  ),
  cacheMaxMb: setting(
    'CACHE_MAX_MB',
    integer(1, 1_000_000),
    64,
    'bound of the in-memory cache, in MB of response bodies held; the least recently used pages go first. Kept answers of repeat views get a quarter of it more, apart',
  ),
  redisUrl: setting(
    'REDIS_URL',
    url({ protocols: ['redis:', 'rediss:'], quiet: true }),
    null,
    "a Redis URL (`redis://host:6379`) holding the state every instance naming it shares: the page cache and kept answers, the credit quotas, the subscriptions' pollers (Redis bounds its memory itself). While it is hung or unreachable, each instance serves from its own memory (pages, answers; quotas from the levels last known) and polls on its own",
    { shownDefault: '_(unset: in memory)_', see: 'Redis: what instances share' },
  ),
  cacheUrl: setting(
    'CACHE_URL',
    url({ protocols: ['redis:', 'rediss:'], quiet: true }),
    null,
    'the older name of `REDIS_URL`, still read: alone, it is used for the cache and the quotas alike; set with `REDIS_URL`, it must name the same Redis (boot error otherwise)',
    { shownDefault: '_(unset)_' },
  ),
  creditQuota: setting(
    'CREDIT_QUOTA',
    creditQuota(),
    null,
    "credits each principal (an API key; with `AUTH_MODE=jwt`, a token's `sub` in its workspace, `JWT_WORKSPACE_CLAIM`) may spend over time, `<credits>/<minute|hour|day>` (`5000/hour`): a bucket of that many credits, refilled continuously; an operation whose estimate does not fit what is left is refused (429 `CREDIT_QUOTA_EXCEEDED`). Shared by the instances through `REDIS_URL`",
    { shownDefault: '_(unset: no quota)_', see: 'Quotas' },
  ),
  trustedDocuments: setting(
    'TRUSTED_DOCUMENTS',
    trustedDocuments(),
    null,
    'path to a JSON file of operation id → document (`{"<sha256>": "query Q { … }"}`, as Relay writes it): only those run, by id; query text and APQ are refused; checked at boot',
    { shownDefault: '_(unset: any operation)_', see: 'Trusted documents' },
  ),
  corsOrigins: setting(
    'CORS_ORIGINS',
    list(origin()),
    ['*'],
    'origins web apps may call the gateway from, comma-separated (`https://app.example.com,http://localhost:3000`); `*` allows any origin (`Access-Control-Allow-Origin: *`). Never with credentials: callers send a header, not cookies',
  ),
  authMode: setting(
    'AUTH_MODE',
    oneOf(...AUTH_MODES),
    'api-key',
    "`api-key`: each caller sends its workspace's key, forwarded upstream; `jwt`: each sends a token of your identity provider, verified here, and the server's key goes upstream",
    { see: 'Serving a web app' },
  ),
  upstreamApiKey: setting(
    'UPSTREAM_API_KEY',
    string(),
    null,
    'with `AUTH_MODE=jwt`: the API key every verified caller spends (one workspace)',
    { secret: true },
  ),
  upstreamKeys: setting(
    'UPSTREAM_KEYS_FILE',
    upstreamKeysFile(),
    null,
    'with `AUTH_MODE=jwt`, instead of `UPSTREAM_API_KEY`: path to a JSON file of workspace → API key (`{"acme": "<key>"}`), the workspace being the value of the token\'s `JWT_WORKSPACE_CLAIM`; a token whose workspace has no key is refused (403); checked at boot',
  ),
  jwtJwksUrl: setting(
    'JWT_JWKS_URL',
    url(),
    null,
    "with `AUTH_MODE=jwt`: the identity provider's keys (a JWKS, `https://idp.example.com/.well-known/jwks.json`), fetched at the first token, after 10 minutes, and for a `kid` they lack",
  ),
  jwtPublicKey: setting(
    'JWT_PUBLIC_KEY',
    publicKeyPem(),
    null,
    'with `AUTH_MODE=jwt`, instead of `JWT_JWKS_URL`: the one public key (PEM, `-----BEGIN PUBLIC KEY-----`…; `\\n` for line breaks) that signs the tokens',
  ),
  jwtIssuer: setting(
    'JWT_ISSUER',
    string(),
    null,
    'with `AUTH_MODE=jwt` (required): the `iss` a token must carry',
  ),
  jwtAudience: setting(
    'JWT_AUDIENCE',
    string(),
    null,
    "with `AUTH_MODE=jwt` (required): the `aud` a token must carry, this gateway's name at the identity provider",
  ),
  jwtAlgorithms: setting(
    'JWT_ALGORITHMS',
    jwtAlgorithms(),
    ['RS256', 'ES256'] as JwtAlgorithm[],
    'signature algorithms a token may use, comma-separated; asymmetric only (`none` and `HS256`… are refused at boot)',
  ),
  jwtWorkspaceClaim: setting(
    'JWT_WORKSPACE_CLAIM',
    string(),
    'workspace',
    "the token's claim naming its workspace, looked up in `UPSTREAM_KEYS_FILE`; with the token's `sub`, it names the principal whose credit quota is spent",
  ),
  jwtQuotaClaim: setting(
    'JWT_QUOTA_CLAIM',
    string(),
    null,
    'with `AUTH_MODE=jwt`: the token\'s claim holding its principal\'s own quota, as `CREDIT_QUOTA` writes it (`"20000/hour"`), over `CREDIT_QUOTA`; a token without it gets `CREDIT_QUOTA`, and one whose claim is malformed is refused (401)',
    { shownDefault: '_(unset: `CREDIT_QUOTA` for all)_' },
  ),
  jwtJwksCooldownMs: setting(
    'JWT_JWKS_COOLDOWN_MS',
    integer(0, 600_000),
    30_000,
    'after a fetch of `JWT_JWKS_URL`, how long a token whose `kid` it lacks is refused without fetching it again (bounds the fetches made-up `kid`s cause; a new key is picked up after it); after a fetch that failed, how long tokens that need a fetch are refused at once (503 `AUTH_UNAVAILABLE`) before one request asks again',
  ),
  logLevel: setting(
    'LOG_LEVEL',
    oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
    'info',
    'JSON log lines on stdout at this level and above; `info` has one line per operation, `warn` only faults',
  ),
  metrics: setting(
    'METRICS',
    oneOf('on', 'off', 'public'),
    'on',
    "Prometheus metrics at `GET /metrics`: `on` serves them on `METRICS_PORT`, or on `PORT` while the gateway serves the sandbox; with `UPSTREAM_URL` set they stay off the public port (they show every workspace's operation names and credit volumes): set `METRICS_PORT`, or `public` to serve them on `PORT` anyway; `off` serves none",
  ),
  metricsPort: setting(
    'METRICS_PORT',
    integer(1, 65_535),
    null,
    'serve `/metrics` on this port instead of `PORT`, to keep it off the public port',
    { shownDefault: '_(unset: on `PORT`)_' },
  ),
  tracesExporter: setting(
    'OTEL_TRACES_EXPORTER',
    oneOf('none', 'otlp'),
    'none',
    'OpenTelemetry traces: `otlp` exports a span per GraphQL request, per operation and per upstream request sent, over OTLP/HTTP; `none` loads no tracing code at all',
    { see: 'Traces' },
  ),
  otlpEndpoint: setting(
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    url(),
    'http://localhost:4318',
    'base URL of the OTLP/HTTP receiver (a collector, `http://collector:4318`); traces go to its `/v1/traces`',
  ),
  otlpTracesEndpoint: setting(
    'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    url(),
    null,
    'the full URL traces are sent to, as it is (no `/v1/traces` added), over `OTEL_EXPORTER_OTLP_ENDPOINT`',
    { shownDefault: '_(unset)_' },
  ),
  otlpProtocol: setting(
    'OTEL_EXPORTER_OTLP_PROTOCOL',
    oneOf(...OTLP_PROTOCOLS),
    'http/protobuf',
    'how spans are encoded: `http/protobuf` or `http/json` (`grpc` is not supported)',
  ),
  otlpTracesProtocol: setting(
    'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
    oneOf(...OTLP_PROTOCOLS),
    null,
    'the same for traces only, over `OTEL_EXPORTER_OTLP_PROTOCOL`',
    { shownDefault: '_(unset)_' },
  ),
  serviceName: setting(
    'OTEL_SERVICE_NAME',
    string(),
    null,
    'the `service.name` of the spans, over one in `OTEL_RESOURCE_ATTRIBUTES`',
    { shownDefault: `\`${DEFAULT_SERVICE_NAME}\`` },
  ),
  requestTimeoutMs: setting(
    'REQUEST_TIMEOUT_MS',
    integer(1_000, 600_000),
    30_000,
    'time a client has to send a whole request, headers and body; then HTTP 408 and the connection is closed (a body sent a byte at a time holds a connection no longer)',
  ),
  headersTimeoutMs: setting(
    'HEADERS_TIMEOUT_MS',
    integer(1_000, 'REQUEST_TIMEOUT_MS'),
    10_000,
    "time a client has to send a request's headers",
  ),
  maxConnections: setting(
    'MAX_CONNECTIONS',
    integer(1, 1_000_000),
    10_000,
    'connections one gateway process holds open at once; more are refused at once',
  ),
  subgraph: setting(
    'SUBGRAPH',
    oneOf('on', 'off'),
    'on',
    'the Apollo Federation subgraph at `/subgraph` (its entity keys other than `id` carry unsigned hints: expose it to a router only, e.g. on `SUBGRAPH_PORT`); `off` serves none',
  ),
  subgraphPort: setting(
    'SUBGRAPH_PORT',
    integer(1, 65_535),
    null,
    'serve `/subgraph` on this port instead of `PORT`, for a router on a private network',
    { shownDefault: '_(unset: on `PORT`)_' },
  ),
  workers: setting(
    'WORKERS',
    integerOrAuto(1, 256, availableParallelism),
    1,
    'gateway processes sharing `PORT` (node:cluster); `auto` is one per core. A worker that dies is replaced',
  ),
  cursorSecret: setting(
    'CURSOR_SECRET',
    string({ trim: false }),
    DEFAULT_CURSOR_SECRET,
    'key that signs cursors and global ids with hints; required in production with `UPSTREAM_URL` (the built-in one is public), the same on every instance (changing it voids the ids and cursors issued)',
    { secret: true },
  ),
};

/** The Redis holding shared state (pages, quotas): `REDIS_URL`, else its older name `CACHE_URL`. */
export function sharedRedisUrl(config: Config): string | null {
  return config.redisUrl ?? config.cacheUrl;
}

/** Everything the gateway reads from its environment, parsed and checked once at boot. */
export type Config = SettingValues<typeof settings>;

/** Defaults, also used by tests that build a config by hand. */
export const defaultConfig: Config = parseSettings(settings, {});

/**
 * Reads the config from `env`. A bad value throws one Error, a line per bad variable naming it
 * and its rule: `PORT must be an integer from 0 to 65535 (got "abc")`. In production
 * (`NODE_ENV=production`) with `UPSTREAM_URL` set, the built-in `CURSOR_SECRET` is refused; the
 * authentication settings are checked together ({@link authSettingsProblems}).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const config = parseSettings(settings, env);
  const problems = authSettingsProblems(config);
  if (config.redisUrl !== null && config.cacheUrl !== null && config.redisUrl !== config.cacheUrl) {
    problems.push(
      'CACHE_URL and REDIS_URL name different Redis servers: CACHE_URL is the older name of REDIS_URL, which holds the page cache and the quotas together. Unset CACHE_URL (or give both the same URL)',
    );
  }
  if (problems.length > 0) throw new Error(problems.join('\n'));
  if (
    env['NODE_ENV'] === 'production' &&
    config.upstreamUrl !== null &&
    config.cursorSecret === DEFAULT_CURSOR_SECRET
  ) {
    throw new Error(
      'CURSOR_SECRET must be set with UPSTREAM_URL in production (NODE_ENV=production): the built-in one is public, and anyone could sign ids and cursors that spend your credits. Set a long random value, the same on every instance.',
    );
  }
  return config;
}
