import type { GraphQLSchema } from 'graphql';
import { createYoga, type Plugin, type YogaServerOptions } from 'graphql-yoga';
import type { Config } from './config.js';
import type { Authenticate, Caller } from './auth/create-authenticator.js';
import { createContext, wantsFresh, type Context } from './context.js';
import { schema, subgraphSchema } from './schema/index.js';
import { maskError } from './errors.js';
import { createEstimator } from './estimate/estimate-operation.js';
import type { Upstream } from './upstream/create-upstream.js';
import type { LiveDeps } from './live/live-subscriptions.js';
import { useAuthentication } from './plugins/use-authentication.js';
import { useCreditBudget } from './plugins/use-credit-budget.js';
import { useUpstreamSession } from './plugins/use-upstream-session.js';
import { useHealth } from './plugins/use-health.js';
import {
  CREDIT_HEADERS,
  QUOTA_HEADERS,
  useCreditsExtension,
} from './plugins/use-credits-extension.js';
import { useCreditQuota, type CreditQuotaOptions } from './plugins/use-credit-quota.js';
import { useParserLimits } from './plugins/use-parser-limits.js';
import { useApq } from './plugins/use-apq.js';
import { useTrustedDocuments } from './plugins/use-trusted-documents.js';
import { usePartialErrors } from './plugins/use-partial-errors.js';
import { useQueryLimits } from './plugins/use-query-limits.js';
import { useRequestBodyLimit } from './plugins/use-request-body-limit.js';
import { useRequestParamErrors } from './plugins/use-request-param-errors.js';
import { useVariableErrors } from './plugins/use-variable-errors.js';
import { useOperationReport, type OperationReport } from './plugins/use-operation-report.js';
import { SUBGRAPH_PATH, useSubgraphRoute } from './plugins/use-subgraph-route.js';
import { useMetricsEndpoint } from './plugins/use-metrics-endpoint.js';
import { useBufferedResponses } from './plugins/use-buffered-responses.js';
import { usePrivateAnswers } from './plugins/use-private-answers.js';
import { useCors } from './plugins/use-cors.js';
import { useCompiledOperations } from './plugins/use-compiled-operations.js';
import { useTracing } from './plugins/use-tracing.js';
import { useAnswerKeeping } from './plugins/use-answer-keeping.js';
import { KnownAnswers } from './answers/known-answers.js';
import { serveKnownAnswers } from './answers/serve-known-answers.js';
import type { RequestTrace, RequestTracer } from './tracing/request-tracer.js';
import { silentLogger, type Logger } from './logging/create-logger.js';
import { operationLog } from './logging/operation-log.js';
import { yogaLogger } from './logging/yoga-logger.js';
import type { GatewayMetrics } from './metrics/gateway-metrics.js';

/** What the app needs besides its config. */
export interface AppDeps {
  /** The upstream pipeline; the app never closes it. */
  upstream: Upstream;
  /** Resolves each request's caller and upstream key, under `AUTH_MODE` (both endpoints share it). */
  authenticate: Authenticate;
  /**
   * A key to prefill in GraphiQL's headers (the sandbox's public demo key), if any; never with
   * `AUTH_MODE=jwt`, where a key is not what a caller sends.
   */
  graphiqlApiKey?: string;
  /**
   * Where credit quotas are kept and who hears of them, when any principal can have one
   * (`CREDIT_QUOTA` or `JWT_QUOTA_CLAIM`); absent, no quotas.
   */
  quotas?: CreditQuotaOptions;
  /** What subscriptions share (pollers, open feeds); absent, the schema's subscriptions refuse. */
  live?: LiveDeps;
  /** True once the process has begun to shut down (main.ts); never, without it. */
  shuttingDown?: () => boolean;
  /** Where the operation lines and Yoga's own messages go; absent, nowhere. */
  logger?: Logger;
  /** Counts each operation; absent, no operation metrics. */
  metrics?: GatewayMetrics;
  /** Traces each GraphQL request (`OTEL_TRACES_EXPORTER=otlp`); absent, nothing is traced. */
  tracer?: RequestTracer;
  /**
   * The text of `GET /metrics` on the app's own port (in a cluster, every worker's, summed by the
   * primary); absent, the app serves no `/metrics` (off, or on `METRICS_PORT`).
   */
  scrapeMetrics?: () => Promise<string>;
}

/** The query GraphiQL opens with: a list and a nested edge, with the credits it costs. */
export const EXAMPLE_QUERY = `# Funding rounds, newest first, with each company's latest executive moves.
# Every response reports the credits it spent in "extensions".
query LatestFunding {
  fundingEvents(first: 5, round: ["series_a"]) {
    edges {
      node {
        id
        round
        amountUsdCents
        announcedAt
        company {
          name
          domain
          hqCountry { code name }
          execMoves(first: 2) {
            nodes { role moveType person { name } }
          }
        }
        investors { name }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}
`;

/** Where the plain graph is served. */
export const GRAPHQL_PATH = '/graphql';

/** The parts of the app both GraphQL endpoints share. */
interface Shared {
  config: Config;
  deps: AppDeps;
  logger: Logger;
  report: (report: OperationReport) => void;
  /** Each traced request's trace, when traces are on. */
  traces?: WeakMap<Request, RequestTrace>;
}

/**
 * A Yoga over `schema` at `endpoint`, with every plugin a GraphQL request passes (limits, budget,
 * credits, reports); `front` come first, `back` last, `extra` is merged into the options.
 */
function graphqlServer(
  shared: Shared,
  schema: GraphQLSchema,
  endpoint: string,
  front: Plugin[],
  extra: Partial<YogaServerOptions<Record<string, unknown>, Context>> = {},
  back: Plugin[] = [],
) {
  const { config, deps, logger, traces } = shared;
  const estimate = createEstimator(schema, {
    defaultPageSize: config.defaultPageSize,
    maxPageSize: config.maxPageSize,
    secret: config.cursorSecret,
  });
  const callers = new WeakMap<Request, Caller>();
  return createYoga<Record<string, unknown>, Context>({
    schema,
    graphqlEndpoint: endpoint,
    landingPage: false,
    graphiql: false,
    // Checked by useRequestBodyLimit, at a fraction of the cost.
    maxRequestBodySize: false,
    context: (initial) => {
      const { request } = initial;
      // Always there (useAuthentication runs first, or the WebSocket server resolved it from
      // connection_init); were it not, no key would be sent.
      const caller = (initial as { caller?: Caller }).caller ?? callers.get(request);
      return createContext(
        config,
        deps.upstream.shared,
        {
          apiKey: caller?.upstreamKey ?? null,
          principal: caller?.principal ?? null,
          creditQuota: caller?.quota ?? config.creditQuota,
          signal: request.signal,
          fresh: wantsFresh(request.headers),
          trace: traces?.get(request)?.upstream,
        },
        deps.live,
      );
    },
    maskedErrors: { maskError },
    cors: false,
    plugins: [
      useCors({
        origins: config.corsOrigins,
        exposedHeaders: ['X-Request-Id', 'WWW-Authenticate', ...CREDIT_HEADERS, ...QUOTA_HEADERS],
        maxAgeSeconds: 600,
      }),
      ...front,
      // Before every other hook on the request's parameters: a caller refused sends nothing.
      useAuthentication({ authenticate: deps.authenticate, callers }),
      // Before useRequestBodyLimit, which wraps whichever request parser is chosen.
      useRequestParamErrors(),
      useRequestBodyLimit(config.maxRequestBytes),
      // Persisted operations turn an id into its document before anything reads the document.
      // Trusted documents replace APQ, whose registrations would let any client add operations.
      config.trustedDocuments ? useTrustedDocuments(config.trustedDocuments) : useApq(),
      // Depth, aliases, tokens and directives: a document's size and shape bound the work and
      // upstream fan-out one request can cause. Before useParserLimits, which wraps the parse
      // function that Armor's token limit replaces.
      useQueryLimits(config),
      // Keeps graphql-js's recursive parser off documents nested too deep to parse safely.
      useParserLimits(),
      useVariableErrors(),
      // After useVariableErrors: it estimates with the coerced variables, before anything runs.
      useCreditBudget({
        estimate,
        defaultBudget: config.creditBudgetDefault,
        subscriptionBudget: config.subscriptionBudgetDefault,
        maxBudget: config.creditBudgetMax,
        maxRecords: config.maxResponseRecords,
        maxRequests: config.maxUpstreamRequests,
      }),
      // After useCreditBudget, whose estimate it reserves; settles when the execution is done.
      ...(deps.quotas ? [useCreditQuota(deps.quotas)] : []),
      useCompiledOperations(),
      useUpstreamSession(),
      usePartialErrors(),
      useCreditsExtension(),
      ...back,
    ],
    logging: yogaLogger(logger),
    ...extra,
  });
}

/** The plugins in front of both endpoints: request ids, reports and traces, Buffer bodies. */
function frontPlugins({ report, deps, traces }: Shared, endpoint: string): Plugin[] {
  return [
    // First: every response gets its X-Request-Id, even one another plugin ends early.
    useOperationReport(report, endpoint, traces && ((request) => traces.get(request)?.traceId)),
    // Before every plugin that may answer the operation early (the budget's): its span starts.
    ...(deps.tracer && traces ? [useTracing({ tracer: deps.tracer, endpoint, traces })] : []),
    usePrivateAnswers(),
    useBufferedResponses(),
  ];
}

/**
 * The GraphQL server as fetch handlers: `app.fetch(request)` in tests, and `listener` (the app
 * behind the kept answers of repeat views, `src/answers/`) for `createServer` in main.ts. Nothing
 * listens here. `app` serves POST and GET on /graphql with GraphiQL (bundled, no
 * CDN) and the health endpoints, and the same graph as an Apollo Federation subgraph on
 * /subgraph (`SUBGRAPH=on`); with `SUBGRAPH_PORT` the subgraph is `subgraph`, served apart.
 */
export function createApp(config: Config, deps: AppDeps) {
  const logger = deps.logger ?? silentLogger();
  const logOperation = operationLog(logger);
  const { metrics } = deps;
  const shared: Shared = {
    config,
    deps,
    logger,
    traces: deps.tracer ? new WeakMap() : undefined,
    report: (report) => {
      metrics?.operation(report);
      logOperation(report);
    },
  };
  const graphiqlHeaders = {
    ...(deps.graphiqlApiKey && config.authMode === 'api-key'
      ? { 'X-API-Key': deps.graphiqlApiKey }
      : {}),
    'X-Credit-Budget': String(config.creditBudgetDefault),
  };
  const subgraph =
    config.subgraph === 'on'
      ? graphqlServer(shared, subgraphSchema, SUBGRAPH_PATH, frontPlugins(shared, SUBGRAPH_PATH))
      : undefined;
  const routed = config.subgraphPort === null ? subgraph : undefined;
  // Whole answers for repeat views, in the page cache's store; not with traces on, where every
  // request runs and is traced.
  const store = deps.upstream.shared.cache?.store;
  const answers =
    store && !deps.tracer
      ? new KnownAnswers(store, config.cacheTtlSeconds * 1000, schema)
      : undefined;
  const app = graphqlServer(
    shared,
    schema,
    GRAPHQL_PATH,
    [
      // First: /subgraph is a server of its own, with its own reports.
      ...(routed ? [useSubgraphRoute(SUBGRAPH_PATH, routed)] : []),
      ...frontPlugins(shared, GRAPHQL_PATH),
      ...(deps.scrapeMetrics ? [useMetricsEndpoint(deps.scrapeMetrics)] : []),
      useHealth({
        shuttingDown: deps.shuttingDown ?? (() => false),
        breakerState: () => deps.upstream.breakerState(),
      }),
    ],
    {
      // The bundled GraphiQL weighs some 17 MB of heap: load it on the first page view only.
      renderGraphiQL: async (options) =>
        (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options),
      graphiql: {
        title: 'Business-Signals GraphQL',
        defaultQuery: EXAMPLE_QUERY,
        headers: JSON.stringify(graphiqlHeaders),
      },
    },
    // Last: it keeps the answer with the headers every other plugin set.
    answers ? [useAnswerKeeping(answers)] : [],
  );
  const listener = answers
    ? serveKnownAnswers(app, {
        answers,
        authenticate: deps.authenticate,
        config,
        quotas: deps.quotas,
        path: GRAPHQL_PATH,
        report: shared.report,
        shuttingDown: deps.shuttingDown ?? (() => false),
      })
    : app;
  return { app, listener, subgraph: routed ? undefined : subgraph };
}

/** A fetch handler that also serves node's `http.createServer`. */
export type App = ReturnType<typeof createApp>['app'];
