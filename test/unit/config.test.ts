import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configTable, renderConfigTable } from '../../scripts/config-table.js';
import { pathOf, tableIn } from '../../scripts/doc-table.js';
import {
  DEFAULT_CURSOR_SECRET,
  defaultConfig,
  loadConfig,
  settings,
  sharedRedisUrl,
} from '../../src/config.js';
import { boolean, list, oneOf, url } from '../../src/config/kinds.js';
import { parseSettings } from '../../src/config/parse-settings.js';
import { setting } from '../../src/config/setting.js';

/** The message `read(env)` throws, or undefined when it does not throw. */
function errorOf(read: (env: NodeJS.ProcessEnv) => unknown, env: NodeJS.ProcessEnv) {
  try {
    read(env);
  } catch (error) {
    return (error as Error).message;
  }
  return undefined;
}

describe("docs/operations.md's configuration table", () => {
  it('is the table rendered from src/config.ts (run `npm run config:table` after a change)', async () => {
    const page = readFileSync(pathOf(configTable), 'utf8');
    expect(tableIn(page, configTable)).toBe(await renderConfigTable());
  });

  it('takes no link from a description: the generator links each `see` title', () => {
    for (const s of Object.values(settings)) expect(s.description, s.env).not.toMatch(/\]\(/);
  });

  it('shows the cursor secret as a built-in constant, not its value', async () => {
    const table = await renderConfigTable();
    expect(table).toMatch(/^\| `CURSOR_SECRET` +\| a built-in constant +\|/m);
    expect(table).not.toContain(DEFAULT_CURSOR_SECRET);
  });
});

describe('loadConfig', () => {
  it('gives the defaults for an empty environment', () => {
    expect(loadConfig({})).toEqual({
      upstreamUrl: null,
      port: 4000,
      host: '0.0.0.0',
      sandboxPort: 4500,
      sandboxTrickleSeconds: 20,
      pollIntervalSeconds: 30,
      maxPollersPerKey: 20,
      pollRequestsPerSecond: 1,
      subscriptionBudgetDefault: 1000,
      maxSubscriptionsPerPrincipal: 100,
      maxSubscriptionsPerConnection: 25,
      alerts: 'on',
      alertsDataDir: 'data',
      alertsMaxPerPrincipal: 20,
      alertDailyBudgetDefault: 1_000,
      alertDeliveryTimeoutMs: 10_000,
      alertRetrySeconds: 86_400,
      alertRetryBaseMs: 30_000,
      alertDisableAfter: 20,
      alertPrivateTargets: 'auto',
      upstreamTimeoutMs: 10_000,
      upstreamConnections: 64,
      upstreamConcurrency: 32,
      defaultPageSize: 20,
      maxPageSize: 500,
      creditBudgetDefault: 1_000,
      creditBudgetMax: 10_000,
      maxUpstreamRequests: 1_000,
      maxResponseRecords: 10_000,
      maxRequestBytes: 1_000_000,
      maxDepth: 16,
      maxAliases: 20,
      maxTokens: 5_000,
      maxDirectives: 50,
      upstreamRetries: 2,
      retryAfterMaxMs: 2_000,
      breakerFailures: 5,
      breakerOpenMs: 5_000,
      operationTimeoutMs: 30_000,
      shutdownGraceMs: 25_000,
      cacheTtlSeconds: 60,
      cacheStaleSeconds: 300,
      cacheMaxMb: 64,
      redisUrl: null,
      cacheUrl: null,
      creditQuota: null,
      trustedDocuments: null,
      corsOrigins: ['*'],
      authMode: 'api-key',
      upstreamApiKey: null,
      upstreamKeys: null,
      jwtJwksUrl: null,
      jwtPublicKey: null,
      jwtIssuer: null,
      jwtAudience: null,
      jwtAlgorithms: ['RS256', 'ES256'],
      jwtWorkspaceClaim: 'workspace',
      jwtQuotaClaim: null,
      jwtJwksCooldownMs: 30_000,
      logLevel: 'info',
      metrics: 'on',
      metricsPort: null,
      tracesExporter: 'none',
      otlpEndpoint: 'http://localhost:4318',
      otlpTracesEndpoint: null,
      otlpProtocol: 'http/protobuf',
      otlpTracesProtocol: null,
      serviceName: null,
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      maxConnections: 10_000,
      subgraph: 'on',
      subgraphPort: null,
      workers: 1,
      cursorSecret: DEFAULT_CURSOR_SECRET,
    });
    expect(defaultConfig).toEqual(loadConfig({}));
  });

  it('reads good values, the bounds of each range included', () => {
    expect(
      loadConfig({
        UPSTREAM_URL: ' https://signals.example.com/api ',
        PORT: '0',
        HOST: ' 127.0.0.1 ',
        SANDBOX_PORT: '65535',
        SANDBOX_TRICKLE_SECONDS: '0',
        POLL_INTERVAL_SECONDS: '86400',
        MAX_POLLERS_PER_KEY: '100000',
        POLL_REQUESTS_PER_SECOND: '1',
        SUBSCRIPTION_BUDGET_DEFAULT: '0',
        MAX_SUBSCRIPTIONS_PER_PRINCIPAL: '100000',
        MAX_SUBSCRIPTIONS_PER_CONNECTION: '1',
        ALERTS: 'off',
        ALERTS_DATA_DIR: ' /var/lib/gateway ',
        ALERTS_MAX_PER_PRINCIPAL: '10000',
        ALERT_DAILY_BUDGET_DEFAULT: '100000000',
        ALERT_DELIVERY_TIMEOUT_MS: '100',
        ALERT_RETRY_SECONDS: '604800',
        ALERT_RETRY_BASE_MS: '10',
        ALERT_DISABLE_AFTER: '1',
        ALERT_PRIVATE_TARGETS: 'off',
        UPSTREAM_TIMEOUT_MS: '600000',
        UPSTREAM_CONNECTIONS: '1',
        UPSTREAM_CONCURRENCY: '1024',
        DEFAULT_PAGE_SIZE: '10000',
        MAX_PAGE_SIZE: '10000',
        CREDIT_BUDGET_DEFAULT: '100000000',
        CREDIT_BUDGET_MAX: '100000000',
        MAX_UPSTREAM_REQUESTS: '1000000',
        MAX_RESPONSE_RECORDS: '1',
        MAX_REQUEST_BYTES: '1000',
        MAX_DEPTH: '64',
        MAX_ALIASES: '0',
        MAX_TOKENS: '1000',
        MAX_DIRECTIVES: '1000',
        UPSTREAM_RETRIES: '10',
        RETRY_AFTER_MAX_MS: '60000',
        BREAKER_FAILURES: '1',
        BREAKER_OPEN_MS: '100',
        OPERATION_TIMEOUT_MS: '600000',
        SHUTDOWN_GRACE_MS: '0',
        CACHE_TTL_SECONDS: '0',
        CACHE_STALE_SECONDS: '86400',
        CACHE_MAX_MB: '1',
        REDIS_URL: 'redis://cache.internal:6379/2',
        CACHE_URL: 'redis://cache.internal:6379/2',
        CREDIT_QUOTA: ' 20000 / day ',
        CORS_ORIGINS: 'https://app.example.com, http://localhost:3000/',
        AUTH_MODE: 'jwt',
        UPSTREAM_API_KEY: 'server-key',
        JWT_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json',
        JWT_ISSUER: 'https://idp.example.com/',
        JWT_AUDIENCE: 'signals-gateway',
        JWT_ALGORITHMS: 'ES256, EdDSA',
        JWT_WORKSPACE_CLAIM: 'org_id',
        JWT_QUOTA_CLAIM: 'quota',
        JWT_JWKS_COOLDOWN_MS: '0',
        LOG_LEVEL: 'silent',
        METRICS: 'off',
        METRICS_PORT: '65535',
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector.example.com/traces',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
        OTEL_SERVICE_NAME: ' signals-gateway-eu ',
        REQUEST_TIMEOUT_MS: '600000',
        HEADERS_TIMEOUT_MS: '600000',
        MAX_CONNECTIONS: '1',
        SUBGRAPH: 'off',
        SUBGRAPH_PORT: '1',
        WORKERS: '256',
        CURSOR_SECRET: ' s3cret ',
      }),
    ).toEqual({
      upstreamUrl: 'https://signals.example.com/api',
      port: 0,
      host: '127.0.0.1',
      sandboxPort: 65_535,
      sandboxTrickleSeconds: 0,
      pollIntervalSeconds: 86400,
      maxPollersPerKey: 100_000,
      pollRequestsPerSecond: 1,
      subscriptionBudgetDefault: 0,
      maxSubscriptionsPerPrincipal: 100_000,
      maxSubscriptionsPerConnection: 1,
      alerts: 'off',
      alertsDataDir: '/var/lib/gateway',
      alertsMaxPerPrincipal: 10_000,
      alertDailyBudgetDefault: 100_000_000,
      alertDeliveryTimeoutMs: 100,
      alertRetrySeconds: 604_800,
      alertRetryBaseMs: 10,
      alertDisableAfter: 1,
      alertPrivateTargets: 'off',
      upstreamTimeoutMs: 600_000,
      upstreamConnections: 1,
      upstreamConcurrency: 1024,
      defaultPageSize: 10_000,
      maxPageSize: 10_000,
      creditBudgetDefault: 100_000_000,
      creditBudgetMax: 100_000_000,
      maxUpstreamRequests: 1_000_000,
      maxResponseRecords: 1,
      maxRequestBytes: 1000,
      maxDepth: 64,
      maxAliases: 0,
      maxTokens: 1000,
      maxDirectives: 1000,
      upstreamRetries: 10,
      retryAfterMaxMs: 60_000,
      breakerFailures: 1,
      breakerOpenMs: 100,
      operationTimeoutMs: 600_000,
      shutdownGraceMs: 0,
      cacheTtlSeconds: 0,
      cacheStaleSeconds: 86_400,
      cacheMaxMb: 1,
      redisUrl: 'redis://cache.internal:6379/2',
      cacheUrl: 'redis://cache.internal:6379/2',
      creditQuota: { credits: 20_000, windowSeconds: 86_400 },
      trustedDocuments: null,
      corsOrigins: ['https://app.example.com', 'http://localhost:3000'],
      authMode: 'jwt',
      upstreamApiKey: 'server-key',
      upstreamKeys: null,
      jwtJwksUrl: 'https://idp.example.com/.well-known/jwks.json',
      jwtPublicKey: null,
      jwtIssuer: 'https://idp.example.com/',
      jwtAudience: 'signals-gateway',
      jwtAlgorithms: ['ES256', 'EdDSA'],
      jwtWorkspaceClaim: 'org_id',
      jwtQuotaClaim: 'quota',
      jwtJwksCooldownMs: 0,
      logLevel: 'silent',
      metrics: 'off',
      metricsPort: 65_535,
      tracesExporter: 'otlp',
      otlpEndpoint: 'http://collector:4318',
      otlpTracesEndpoint: 'https://collector.example.com/traces',
      otlpProtocol: 'http/json',
      otlpTracesProtocol: 'http/protobuf',
      serviceName: 'signals-gateway-eu',
      requestTimeoutMs: 600_000,
      headersTimeoutMs: 600_000,
      maxConnections: 1,
      subgraph: 'off',
      subgraphPort: 1,
      workers: 256,
      cursorSecret: ' s3cret ',
    });
  });

  it('reads CREDIT_QUOTA per minute, hour or day, and refuses anything else naming the form', () => {
    expect(loadConfig({ CREDIT_QUOTA: '5000/hour' }).creditQuota).toEqual({
      credits: 5000,
      windowSeconds: 3600,
    });
    expect(loadConfig({ CREDIT_QUOTA: '60/minute' }).creditQuota).toEqual({
      credits: 60,
      windowSeconds: 60,
    });
    for (const bad of ['5000', '5000/week', '0/hour', '-5/hour', '1.5/hour']) {
      expect(() => loadConfig({ CREDIT_QUOTA: bad })).toThrowError(
        /^CREDIT_QUOTA must be <credits>\/<minute\|hour\|day>/,
      );
    }
    expect(() => loadConfig({ JWT_QUOTA_CLAIM: 'quota' })).toThrowError(
      /JWT_QUOTA_CLAIM is read only with AUTH_MODE=jwt/,
    );
  });

  it('takes CACHE_URL alone as the shared Redis, and refuses it naming another than REDIS_URL', () => {
    const cacheOnly = loadConfig({ CACHE_URL: 'redis://a:6379' });
    expect(sharedRedisUrl(cacheOnly)).toBe('redis://a:6379');
    expect(sharedRedisUrl(loadConfig({ REDIS_URL: 'redis://b:6379' }))).toBe('redis://b:6379');
    expect(
      sharedRedisUrl(loadConfig({ REDIS_URL: 'redis://b:6379', CACHE_URL: 'redis://b:6379' })),
    ).toBe('redis://b:6379');
    expect(() =>
      loadConfig({ REDIS_URL: 'redis://b:6379', CACHE_URL: 'redis://a:6379' }),
    ).toThrowError(/^CACHE_URL and REDIS_URL name different Redis servers/m);
    expect(sharedRedisUrl(defaultConfig)).toBeNull();
  });

  it('refuses the built-in CURSOR_SECRET in production with UPSTREAM_URL, naming it', () => {
    const production = { NODE_ENV: 'production', UPSTREAM_URL: 'https://signals.example.com' };
    expect(() => loadConfig(production)).toThrowError(/^CURSOR_SECRET must be set/);
    expect(loadConfig({ ...production, CURSOR_SECRET: 'x' }).cursorSecret).toBe('x');
    // The sandbox (no UPSTREAM_URL), or not production: the built-in one is fine.
    expect(() => loadConfig({ NODE_ENV: 'production' })).not.toThrow();
    expect(() => loadConfig({ UPSTREAM_URL: 'https://signals.example.com' })).not.toThrow();
  });

  it('reads WORKERS=auto as one worker per core', () => {
    expect(loadConfig({ WORKERS: 'auto' }).workers).toBe(availableParallelism());
  });

  it('takes an empty or blank variable as unset', () => {
    const blank = { UPSTREAM_URL: ' ', PORT: '', HOST: '  ', SANDBOX_PORT: ' ', CURSOR_SECRET: '' };
    expect(loadConfig(blank)).toEqual(defaultConfig);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT must be an integer from 0 to 65535 (got "abc")'],
    [{ PORT: '65536' }, 'PORT must be an integer from 0 to 65535 (got "65536")'],
    [{ PORT: '80.5' }, 'PORT must be an integer from 0 to 65535 (got "80.5")'],
    [{ SANDBOX_PORT: '-1' }, 'SANDBOX_PORT must be an integer from 0 to 65535 (got "-1")'],
    [
      { SANDBOX_TRICKLE_SECONDS: '86401' },
      'SANDBOX_TRICKLE_SECONDS must be an integer from 0 to 86400 (got "86401")',
    ],
    [
      { POLL_INTERVAL_SECONDS: '0' },
      'POLL_INTERVAL_SECONDS must be an integer from 1 to 86400 (got "0")',
    ],
    [
      { MAX_POLLERS_PER_KEY: '0' },
      'MAX_POLLERS_PER_KEY must be an integer from 1 to 100000 (got "0")',
    ],
    [
      { POLL_REQUESTS_PER_SECOND: '1001' },
      'POLL_REQUESTS_PER_SECOND must be an integer from 1 to 1000 (got "1001")',
    ],
    [
      { UPSTREAM_TIMEOUT_MS: '0' },
      'UPSTREAM_TIMEOUT_MS must be an integer from 1 to 600000 (got "0")',
    ],
    [
      { UPSTREAM_CONNECTIONS: '4097' },
      'UPSTREAM_CONNECTIONS must be an integer from 1 to 4096 (got "4097")',
    ],
    [
      { UPSTREAM_CONCURRENCY: '0' },
      'UPSTREAM_CONCURRENCY must be an integer from 1 to 1024 (got "0")',
    ],
    [{ MAX_PAGE_SIZE: '10001' }, 'MAX_PAGE_SIZE must be an integer from 1 to 10000 (got "10001")'],
    [
      { MAX_REQUEST_BYTES: '999' },
      'MAX_REQUEST_BYTES must be an integer from 1000 to 100000000 (got "999")',
    ],
    [{ MAX_DEPTH: '0' }, 'MAX_DEPTH must be an integer from 1 to 64 (got "0")'],
    [{ MAX_DEPTH: '65' }, 'MAX_DEPTH must be an integer from 1 to 64 (got "65")'],
    [{ MAX_ALIASES: '-1' }, 'MAX_ALIASES must be an integer from 0 to 1000 (got "-1")'],
    [{ MAX_TOKENS: '999' }, 'MAX_TOKENS must be an integer from 1000 to 100000 (got "999")'],
    [{ MAX_DIRECTIVES: '1001' }, 'MAX_DIRECTIVES must be an integer from 0 to 1000 (got "1001")'],
    [
      { CACHE_TTL_SECONDS: '-1' },
      'CACHE_TTL_SECONDS must be an integer from 0 to 86400 (got "-1")',
    ],
    [
      { CACHE_STALE_SECONDS: '86401' },
      'CACHE_STALE_SECONDS must be an integer from 0 to 86400 (got "86401")',
    ],
    [{ CACHE_MAX_MB: '0' }, 'CACHE_MAX_MB must be an integer from 1 to 1000000 (got "0")'],
    [{ CACHE_URL: 'http://cache:6379' }, 'CACHE_URL must use redis or rediss (got "http:")'],
    // A Redis URL may hold a password: a malformed one is not echoed.
    [{ CACHE_URL: 'redis//:pw@cache' }, 'CACHE_URL must be an absolute redis or rediss URL'],
    [
      { DEFAULT_PAGE_SIZE: '501' },
      'DEFAULT_PAGE_SIZE must be an integer from 1 to MAX_PAGE_SIZE (500) (got "501")',
    ],
    [
      { DEFAULT_PAGE_SIZE: '50', MAX_PAGE_SIZE: '40' },
      'DEFAULT_PAGE_SIZE must be an integer from 1 to MAX_PAGE_SIZE (40) (got "50")',
    ],
    [{ WORKERS: '0' }, 'WORKERS must be auto or an integer from 1 to 256 (got "0")'],
    [{ WORKERS: 'all' }, 'WORKERS must be auto or an integer from 1 to 256 (got "all")'],
    [
      { CORS_ORIGINS: 'https://app.example.com/path' },
      'CORS_ORIGINS must be * or origins such as https://app.example.com (got "https://app.example.com/path")',
    ],
    [
      { LOG_LEVEL: 'verbose' },
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")',
    ],
    [{ METRICS: 'yes' }, 'METRICS must be one of on, off, public (got "yes")'],
    [
      { OTEL_TRACES_EXPORTER: 'console' },
      'OTEL_TRACES_EXPORTER must be one of none, otlp (got "console")',
    ],
    [
      { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      'OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, http/json (got "grpc")',
    ],
    [
      { REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '6000' },
      'HEADERS_TIMEOUT_MS must be an integer from 1000 to REQUEST_TIMEOUT_MS (5000) (got "6000")',
    ],
    [
      { UPSTREAM_URL: 'signals.example.com' },
      'UPSTREAM_URL must be an absolute http or https URL (got "signals.example.com")',
    ],
    [
      { UPSTREAM_URL: 'ftp://signals.example.com' },
      'UPSTREAM_URL must use http or https (got "ftp:")',
    ],
  ])('rejects %j, naming the variable and the rule', (env, message) => {
    expect(errorOf(loadConfig, env)).toBe(message);
  });

  it('reports every bad variable at once, one line each', () => {
    expect(
      errorOf(loadConfig, { PORT: 'x', UPSTREAM_URL: 'nope', HOST: 'ok' })?.split('\n'),
    ).toEqual([
      'UPSTREAM_URL must be an absolute http or https URL (got "nope")',
      'PORT must be an integer from 0 to 65535 (got "x")',
    ]);
  });
});

describe('kinds of setting, on a table of their own', () => {
  const settings = {
    verbose: setting('VERBOSE', boolean(), false, 'log every request'),
    logLevel: setting(
      'LOG_LEVEL',
      oneOf('debug', 'info', 'warn'),
      'info',
      'least severe level logged',
    ),
    corsOrigins: setting('CORS_ORIGINS', list(url()), [], 'origins allowed by CORS'),
    tags: setting('TAGS', list(), ['a'], 'labels on every metric'),
  };
  const read = (env: NodeJS.ProcessEnv) => parseSettings(settings, env);

  it('reads good values and defaults', () => {
    expect(read({})).toEqual({ verbose: false, logLevel: 'info', corsOrigins: [], tags: ['a'] });
    expect(
      read({
        VERBOSE: 'true',
        LOG_LEVEL: 'warn',
        CORS_ORIGINS: 'https://a.example, http://b.example,',
        TAGS: 'x , y',
      }),
    ).toEqual({
      verbose: true,
      logLevel: 'warn',
      corsOrigins: ['https://a.example', 'http://b.example'],
      tags: ['x', 'y'],
    });
  });

  it('rejects bad values, naming the variable', () => {
    expect(
      errorOf(read, {
        VERBOSE: 'yes',
        LOG_LEVEL: 'trace',
        CORS_ORIGINS: 'https://a.example,ws://b',
      }),
    ).toBe(
      [
        'VERBOSE must be true or false (got "yes")',
        'LOG_LEVEL must be one of debug, info, warn (got "trace")',
        'CORS_ORIGINS must use http or https (got "ws:")',
      ].join('\n'),
    );
  });
});

describe('AUTH_MODE=jwt: the settings are checked together at boot', () => {
  const dir = mkdtempSync(join(tmpdir(), 'upstream-keys-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  /** A file of `content` in the suite's directory: its path. */
  function file(name: string, content: string) {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  }
  const pem = (type: 'rsa' | 'ec') =>
    (type === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' })
    ).publicKey.export({ type: 'spki', format: 'pem' }) as string;
  const JWT = {
    AUTH_MODE: 'jwt',
    JWT_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json',
    JWT_ISSUER: 'https://idp.example.com/',
    JWT_AUDIENCE: 'signals-gateway',
    UPSTREAM_API_KEY: 'server-key',
  };

  it('names every setting AUTH_MODE=jwt lacks, at once', () => {
    expect(errorOf(loadConfig, { AUTH_MODE: 'jwt' })?.split('\n')).toEqual([
      'AUTH_MODE=jwt requires JWT_ISSUER and JWT_AUDIENCE: the "iss" and "aud" your identity provider puts in the tokens it issues for this gateway',
      "AUTH_MODE=jwt requires exactly one of JWT_JWKS_URL (the identity provider's keys, fetched) or JWT_PUBLIC_KEY (one key, in PEM): neither JWT_JWKS_URL and JWT_PUBLIC_KEY set",
      "AUTH_MODE=jwt requires exactly one of UPSTREAM_API_KEY (one workspace's key) or UPSTREAM_KEYS_FILE (a key per workspace): neither UPSTREAM_API_KEY and UPSTREAM_KEYS_FILE set",
    ]);
    expect(errorOf(loadConfig, { ...JWT, JWT_AUDIENCE: ' ' })).toMatch(
      /^AUTH_MODE=jwt requires JWT_AUDIENCE:/,
    );
  });

  it('takes exactly one source of keys, and one of upstream keys', () => {
    const keys = file('two.json', '{"acme": "k1"}');
    expect(errorOf(loadConfig, { ...JWT, JWT_PUBLIC_KEY: pem('rsa') })).toMatch(
      /JWT_PUBLIC_KEY \(one key, in PEM\): both JWT_JWKS_URL and JWT_PUBLIC_KEY set$/,
    );
    expect(errorOf(loadConfig, { ...JWT, UPSTREAM_KEYS_FILE: keys })).toMatch(
      /both UPSTREAM_API_KEY and UPSTREAM_KEYS_FILE set$/,
    );
  });

  it('reads a PEM (with \\n for line breaks) and a keys file', () => {
    const keys = file('keys.json', '{"acme": " k1 ", "globex": "k2"}');
    const { JWT_JWKS_URL: _url, UPSTREAM_API_KEY: _key, ...rest } = JWT;
    const config = loadConfig({
      ...rest,
      JWT_PUBLIC_KEY: pem('ec').trim().replace(/\n/g, '\\n'),
      UPSTREAM_KEYS_FILE: keys,
    });
    expect(config.jwtPublicKey?.asymmetricKeyType).toBe('ec');
    expect(config.upstreamKeys).toEqual(
      new Map([
        ['acme', 'k1'],
        ['globex', 'k2'],
      ]),
    );
  });

  it.each([
    ['none', 'JWT_ALGORITHMS must not name none: it accepts unsigned tokens'],
    ['RS256,HS256', 'JWT_ALGORITHMS must not name HS256: with HMAC the verifying key also signs'],
    ['RS256,hs512', 'JWT_ALGORITHMS must not name hs512:'],
    ['RS255', 'JWT_ALGORITHMS must name algorithms among RS256, RS384'],
  ])('refuses JWT_ALGORITHMS=%s', (algorithms, message) => {
    expect(errorOf(loadConfig, { ...JWT, JWT_ALGORITHMS: algorithms })).toContain(message);
  });

  it('refuses a JWT_PUBLIC_KEY that is not a public key, or verifies none of JWT_ALGORITHMS', () => {
    const { JWT_JWKS_URL: _url, ...rest } = JWT;
    const read = (value: string, algorithms?: string) =>
      errorOf(loadConfig, { ...rest, JWT_PUBLIC_KEY: value, JWT_ALGORITHMS: algorithms });
    expect(read('not a key')).toBe(
      'JWT_PUBLIC_KEY must be a public key in PEM (-----BEGIN PUBLIC KEY----- …)',
    );
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(read(privateKey.export({ type: 'pkcs8', format: 'pem' }) as string)).toBe(
      'JWT_PUBLIC_KEY must be a public key, not a private one: give the verifying half only',
    );
    expect(read(pem('ec'), 'RS256,PS256')).toBe(
      'JWT_PUBLIC_KEY must be a key that verifies one of JWT_ALGORITHMS (RS256, PS256); it is a ec key',
    );
    expect(read(pem('rsa'), 'RS256')).toBeUndefined();
  });

  it.each([
    ['a missing file', () => join(dir, 'nope.json'), /cannot read .*ENOENT/],
    [
      'text that is not JSON',
      () => file('bad.json', '{"acme": "sk_live_SECRET"'),
      /is not JSON\)$/,
    ],
    ['an array', () => file('array.json', '["sk_live_SECRET"]'), /holds an array\)$/],
    ['a key that is not a string', () => file('number.json', '{"acme": 42}'), /no key at "acme"/],
    ['an empty object', () => file('empty.json', '{}'), /at least one workspace/],
  ])('refuses an UPSTREAM_KEYS_FILE holding %s, quoting no key', (_what, path, rule) => {
    const { UPSTREAM_API_KEY: _key, ...rest } = JWT;
    const message = errorOf(loadConfig, { ...rest, UPSTREAM_KEYS_FILE: path() });
    expect(message).toMatch(/^UPSTREAM_KEYS_FILE must name /);
    expect(message).toMatch(rule);
    expect(message).not.toContain('SECRET');
  });

  it('refuses a jwt setting under AUTH_MODE=api-key, where it would be ignored', () => {
    expect(errorOf(loadConfig, { UPSTREAM_API_KEY: 'k', JWT_ISSUER: 'https://idp/' })).toBe(
      'JWT_ISSUER, UPSTREAM_API_KEY are read only with AUTH_MODE=jwt: set AUTH_MODE=jwt, or unset them (with AUTH_MODE=api-key each caller sends its own X-API-Key)',
    );
  });
});
