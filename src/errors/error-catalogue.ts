import { settings } from '../config.js';
import type { Setting } from '../config/setting.js';

/**
 * Who raises a code: `service`, the Business-Signals service (one of its own codes, spec section
 * 7, passed through unchanged); `gateway`, this gateway; `yoga`, GraphQL Yoga, under which the
 * gateway runs (listed so that a client knows every code it can get).
 */
export type ErrorSide = 'service' | 'gateway' | 'yoga';

/** The status (and headers) of an HTTP response that carries an error. */
export interface ErrorHttp {
  readonly status: number;
  /**
   * The status holds under `Accept: application/graphql-response+json` only: a client that accepts
   * `application/json` alone gets 200, as the GraphQL-over-HTTP spec asks of request errors.
   */
  readonly spec?: boolean;
  readonly headers?: Readonly<Record<string, string>>;
}

/** One code of the catalogue: what the client gets, whether to retry, and when it happens. */
export interface ErrorEntry {
  /**
   * The HTTP answer. Absent where none is set: the error is in `errors` of a 200, beside whatever
   * data the operation has (a field's error, or a refusal before execution with no `data`). A code
   * the service raises too comes from the service as a field's error, in a 200, whatever this says:
   * this is the gateway's own refusal.
   */
  readonly http?: ErrorHttp;
  /**
   * Whether the client may send the same operation again, unchanged, and expect that it may
   * succeed (after `extensions.retryAfter`, when it is given).
   */
  readonly retryable: boolean;
  /** Who raises it. */
  readonly raisedBy: readonly ErrorSide[];
  /** When a client gets it: one line of markdown (no links), the docs' error table. */
  readonly when: string;
  /**
   * The title of the docs' section that says more (a heading of README.md, CONTRIBUTING.md or
   * docs/): the table's generator links it, wherever that section is.
   */
  readonly see?: string;
  /** The `extensions` it carries beside `code`, as markdown; absent for none. */
  readonly extensions?: string;
}

/**
 * An integer with its thousands grouped by commas, e.g. 1,048,576. Not `toLocaleString`: that loads
 * ICU's number formatting, some 8 MB of resident memory held for the process's life (issue 39).
 */
const grouped = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** A setting by its variable and default, e.g. "`MAX_DEPTH` (16)". */
const limit = (s: Setting<number>) => `\`${s.env}\` (${grouped(s.default)})`;

const nothingRuns = '(nothing runs)';

/**
 * Every `extensions.code` a client can get, each once, in the order the docs list them.
 * `ErrorCode`, the service's codes the upstream mapping passes through, the status each error
 * is answered with (`gatewayError`) and the error table of docs/clients.md (`npm run
 * errors:table`) are all read from here.
 */
export const errorCatalogue = {
  INVALID_INPUT: {
    raisedBy: ['service', 'gateway'],
    retryable: false,
    when: `an argument breaks a rule of the service, checked before any request where the gateway knows the rule (each argument's description states it): \`first\`, amounts and years >= 0, real calendar timestamps, ids, cursors (malformed, or reused with other arguments), non-blank strings, the length of strings and lists`,
    extensions:
      '`argument` when the gateway refused it; `requestId`, `upstreamStatus` when the service did',
  },
  BAD_USER_INPUT: {
    raisedBy: ['gateway'],
    retryable: false,
    when: `a variable does not fit its type, e.g. \`1.5\` or \`"2000"\` for an \`Int\`, or a required one is missing (checked before any request; a \`DateTime\` or \`SafeInt\` variable answers \`INVALID_INPUT\`)`,
  },
  UNAUTHORIZED: {
    raisedBy: ['service', 'gateway'],
    retryable: false,
    when: 'no API key was sent (no request is made), or the service does not know it',
    extensions: '`requestId`, `upstreamStatus` when the service answered',
  },
  UNAUTHENTICATED: {
    http: { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } },
    raisedBy: ['gateway'],
    retryable: false,
    when: `\`${settings.authMode.env}=jwt\` and the request sent no bearer token, or its token failed a check (signature, algorithm, \`kid\`, \`iss\`, \`aud\`, \`exp\`, \`nbf\`): the message says which, and \`WWW-Authenticate\` adds \`error="invalid_token"\` where a token was sent ${nothingRuns}`,
    see: 'Keys and tokens',
  },
  PAYMENT_REQUIRED: {
    raisedBy: ['service'],
    retryable: false,
    when: "the caller's workspace has no credits left",
    extensions: '`requestId`, `upstreamStatus`',
  },
  FORBIDDEN: {
    http: { status: 403 },
    raisedBy: ['service', 'gateway'],
    retryable: false,
    when: `the service's abuse prevention blocked the request (a field's error, in a 200); or, with \`${settings.authMode.env}=jwt\`, the token is valid but its workspace has no key in \`${settings.upstreamKeys.env}\` ${nothingRuns}`,
    extensions: '`requestId`, `upstreamStatus` when the service raised it',
  },
  TOO_MANY_REQUESTS: {
    raisedBy: ['service'],
    retryable: true,
    when: `the workspace's rate limit was exceeded, and its \`Retry-After\` is longer than \`${settings.retryAfterMaxMs.env}\` (a shorter one is waited out once)`,
    extensions: '`retryAfter` (seconds), `requestId`, `upstreamStatus`',
  },
  AUTH_UNAVAILABLE: {
    http: { status: 503, headers: { 'retry-after': '5' } },
    raisedBy: ['gateway'],
    retryable: true,
    when: "`AUTH_MODE=jwt` and the identity provider's keys (`JWT_JWKS_URL`) could not be fetched, so the token could not be checked (nothing runs)",
    see: 'Keys and tokens',
  },
  UPSTREAM_UNAVAILABLE: {
    raisedBy: ['gateway'],
    retryable: true,
    when: `the service was unreachable, timed out, failed (5xx), or answered an unknown code or a malformed body, after the retries; or the circuit breaker is open (nothing is sent); and no cached page of the same request, expired less than \`${settings.cacheStaleSeconds.env}\` ago, could answer instead`,
    see: 'The page cache',
    extensions: '`upstreamStatus`, `requestId` when known; `retryAfter` when the breaker is open',
  },
  OPERATION_TIMEOUT: {
    raisedBy: ['gateway'],
    retryable: true,
    when: `the operation ran past \`${settings.operationTimeoutMs.env}\` (${settings.operationTimeoutMs.default / 1000} s from its first upstream request): its requests were aborted and this field was not completed (a list returns what it has)`,
  },
  CREDIT_BUDGET_EXCEEDED: {
    raisedBy: ['gateway'],
    retryable: false,
    when: `the operation's estimate is above its budget, so it is refused before any upstream request ${nothingRuns}`,
    see: 'A budget per operation',
    extensions: '`estimate`, `budget`',
  },
  CREDIT_QUOTA_EXCEEDED: {
    http: { status: 429 },
    raisedBy: ['gateway'],
    retryable: true,
    when: `the operation's estimate does not fit what is left of the caller's credit quota (\`${settings.creditQuota.env}\`, or the token's \`${settings.jwtQuotaClaim.env}\`), so it is refused before any upstream request; \`Retry-After\` and \`retryAfter\` say when it fits, and neither is sent for an estimate above the whole quota, which never fits ${nothingRuns}`,
    see: 'Quotas',
    extensions:
      '`estimate`, `available`, `limit`, `retryAfter` (seconds; absent when it never fits)',
  },
  SUBSCRIPTION_TOO_SLOW: {
    raisedBy: ['gateway'],
    retryable: true,
    when: 'a subscriber fell too far behind the events matching it (10,000 records waiting: it reads too slowly, or its payloads take too long): its subscription ends with it; subscribe again, with narrower filters if events come faster than it can take them',
    extensions: '`limit` (the records that may wait)',
  },
  CREDIT_BUDGET_EXHAUSTED: {
    raisedBy: ['gateway'],
    retryable: false,
    when: "the operation spent its budget while running: this field's rest was not fetched (a list returns what it has); a subscription ends with it once its budget is spent",
    see: 'A budget per operation',
  },
  TOO_MANY_SUBSCRIPTIONS: {
    raisedBy: ['gateway'],
    retryable: true,
    when: `a subscription would go past a bound named by \`scope\`: \`principal\`, its principal has ${limit(settings.maxSubscriptionsPerPrincipal)} subscriptions open on this instance; \`connection\`, its WebSocket has ${limit(settings.maxSubscriptionsPerConnection)}; \`key\`, its upstream key has ${limit(settings.maxPollersPerKey)} pollers (distinct lists and filters) and it needs one more (the filters of a running subscription always fit). It may fit once another ends ${nothingRuns}`,
    see: 'Subscriptions',
    extensions: '`limit`, `scope`',
  },
  NOT_FOUND: {
    raisedBy: ['gateway'],
    retryable: false,
    when: "an alert or a delivery id names nothing the caller owns: it was deleted, or it is another caller's (whose alerts a caller never sees); or alerts are not served (`ALERTS=off`)",
  },
  UPSTREAM_REQUESTS_EXCEEDED: {
    raisedBy: ['gateway'],
    retryable: false,
    when: `the operation would send more upstream requests than ${limit(settings.maxUpstreamRequests)} (lookups that find nothing count too): refused before it runs when its estimate says so, else its further requests are refused while it runs`,
    extensions: '`requests`, `limit`',
  },
  RESPONSE_TOO_LARGE: {
    raisedBy: ['gateway'],
    retryable: false,
    when: `the answer could hold more records than ${limit(settings.maxResponseRecords)} ${nothingRuns}`,
    extensions: '`records`, `limit`',
  },
  GRAPHQL_PARSE_FAILED: {
    http: { status: 400, spec: true },
    raisedBy: ['yoga'],
    retryable: false,
    when: `the document does not parse ${nothingRuns}`,
  },
  GRAPHQL_VALIDATION_FAILED: {
    http: { status: 400, spec: true },
    raisedBy: ['yoga'],
    retryable: false,
    when: `the document does not fit the schema ${nothingRuns}`,
  },
  DOCUMENT_TOO_DEEP: {
    http: { status: 400, spec: true },
    raisedBy: ['gateway'],
    retryable: false,
    when: `the document nests \`{\`, \`[\` and \`(\` too deep to parse; refused before parsing ${nothingRuns}`,
    see: 'Query limits',
  },
  MAX_DEPTH_EXCEEDED: {
    http: { status: 400, spec: true },
    raisedBy: ['gateway'],
    retryable: false,
    when: `an operation nests fields deeper than ${limit(settings.maxDepth)} ${nothingRuns}`,
    see: 'Query limits',
    extensions: '`limit`, `found`',
  },
  MAX_ALIASES_EXCEEDED: {
    http: { status: 400, spec: true },
    raisedBy: ['gateway'],
    retryable: false,
    when: `an operation has more aliases than ${limit(settings.maxAliases)} ${nothingRuns}`,
    extensions: '`limit`, `found`',
  },
  MAX_TOKENS_EXCEEDED: {
    http: { status: 400, spec: true },
    raisedBy: ['gateway'],
    retryable: false,
    when: `the document has more tokens than ${limit(settings.maxTokens)}; refused while parsing ${nothingRuns}`,
    extensions: '`limit`',
  },
  MAX_DIRECTIVES_EXCEEDED: {
    http: { status: 400, spec: true },
    raisedBy: ['gateway'],
    retryable: false,
    when: `an operation has more directives than ${limit(settings.maxDirectives)} ${nothingRuns}`,
    extensions: '`limit`, `found`',
  },
  BAD_REQUEST: {
    http: { status: 400 },
    raisedBy: ['gateway', 'yoga'],
    retryable: false,
    when: `the HTTP request is malformed, e.g. a body or a \`variables\` parameter that is not a JSON object, or an \`X-Credit-Budget\` that is not a whole number; the message names it ${nothingRuns}`,
  },
  REQUEST_ENTITY_TOO_LARGE: {
    // `useRequestBodyLimit` adds `Connection: close` where the rest of the body is not read.
    http: { status: 413 },
    raisedBy: ['gateway'],
    retryable: false,
    when: `the request body is above ${limit(settings.maxRequestBytes)} bytes ${nothingRuns}`,
  },
  PERSISTED_QUERY_NOT_FOUND: {
    // No header of its own: no cache may keep this answer (the same request succeeds once the
    // query is registered), and every answer already says `private, no-store` (usePrivateAnswers).
    http: { status: 404 },
    raisedBy: ['gateway'],
    retryable: true,
    when: `a hash sent without its query is not registered, or no longer: send both, which registers it (the message is \`PersistedQueryNotFound\`, on which clients do so) ${nothingRuns}`,
    see: 'Persisted queries',
  },
  PERSISTED_QUERY_MISMATCH: {
    http: { status: 400 },
    raisedBy: ['gateway'],
    retryable: false,
    when: 'the `persistedQuery.sha256Hash` sent is not the SHA-256 of the query sent with it (nothing runs, nothing is registered)',
  },
  PERSISTED_QUERY_NOT_IN_LIST: {
    http: { status: 400, spec: true },
    raisedBy: ['gateway'],
    retryable: false,
    when: `\`${settings.trustedDocuments.env}\` is set and the operation id sent is not in it ${nothingRuns}`,
  },
  PERSISTED_QUERY_ID_REQUIRED: {
    http: { status: 400, spec: true },
    raisedBy: ['gateway'],
    retryable: false,
    when: `\`${settings.trustedDocuments.env}\` is set and the request sent query text (an APQ registration too) or no id: send a listed operation's id ${nothingRuns}`,
  },
  INTERNAL_SERVER_ERROR: {
    http: { status: 500 },
    raisedBy: ['yoga'],
    retryable: false,
    when: 'a bug in the gateway: the message is masked to "Unexpected error." and the error is logged (a field\'s error in a 200 once the operation runs)',
  },
} as const satisfies Record<string, ErrorEntry>;

/** A stable `extensions.code` value a client can branch on. */
export type ErrorCode = keyof typeof errorCatalogue;

/** Every code by its name, e.g. `ErrorCode.INVALID_INPUT`. */
export const ErrorCode = Object.freeze(
  Object.fromEntries(Object.keys(errorCatalogue).map((code) => [code, code])),
) as { readonly [C in ErrorCode]: C };

type RaisedBy<S extends ErrorSide> = {
  [C in ErrorCode]: S extends (typeof errorCatalogue)[C]['raisedBy'][number] ? C : never;
}[ErrorCode];

/** The service's own codes (spec section 7), which the gateway passes through. */
export type ServiceErrorCode = RaisedBy<'service'>;

/** The codes the gateway raises itself, or passes through from the service. */
export type GatewayErrorCode = RaisedBy<'gateway'> | ServiceErrorCode;

const serviceCodes: ReadonlySet<string> = new Set(
  (Object.keys(errorCatalogue) as ErrorCode[]).filter((code) =>
    (errorCatalogue[code] as ErrorEntry).raisedBy.includes('service'),
  ),
);

/** Whether `code` is one of the service's own codes. */
export function isServiceCode(code: string): code is ServiceErrorCode {
  return serviceCodes.has(code);
}
