import type { GraphQLSchema } from 'graphql';
import { createYoga, type YogaServerOptions } from 'graphql-yoga';
import type { Admission } from './admission/admission.js';
import type { DoorContext } from './admission/door-context.js';
import type { Config } from './config.js';
import { contextOf, wantsFresh, type Context, type ContextDeps } from './context.js';
import { CREDIT_HEADERS, QUOTA_HEADERS } from './credits/credit-extensions.js';
import { schema, subgraphSchema } from './schema/index.js';
import { maskError } from './errors.js';
import { createEstimator } from './estimate/estimate-operation.js';
import type { Upstream } from './upstream/create-upstream.js';
import type { LiveDeps } from './live/live-deps.js';
import type { AlertsApi } from './alerts/alerts-api.js';
import { useAdmission } from './plugins/use-admission.js';
import { useAnswerKeeping } from './plugins/use-answer-keeping.js';
import { useBufferedResponses } from './plugins/use-buffered-responses.js';
import { useCompiledOperations } from './plugins/use-compiled-operations.js';
import { useCors } from './plugins/use-cors.js';
import { useCredits } from './plugins/use-credits.js';
import { useDoorBody } from './plugins/use-door-body.js';
import { useHealth } from './plugins/use-health.js';
import { useIncrementalDelivery } from './plugins/use-incremental-delivery.js';
import { useMetricsEndpoint } from './plugins/use-metrics-endpoint.js';
import { useParserLimits } from './plugins/use-parser-limits.js';
import { usePartialErrors } from './plugins/use-partial-errors.js';
import { usePrivateAnswers } from './plugins/use-private-answers.js';
import { useQueryLimits } from './plugins/use-query-limits.js';
import { useRequestBodyLimit } from './plugins/use-request-body-limit.js';
import { useRequestParamErrors } from './plugins/use-request-param-errors.js';
import { SUBGRAPH_PATH, useSubgraphRoute } from './plugins/use-subgraph-route.js';
import { useTracing } from './plugins/use-tracing.js';
import { useVariableErrors } from './plugins/use-variable-errors.js';
import { KnownAnswers } from './answers/known-answers.js';
import { corsPolicy, type CorsPolicy } from './http/cors-policy.js';
import { serveJsonPosts } from './http/serve-json-posts.js';
import { serveKnownAnswers, type RunListener } from './answers/serve-known-answers.js';
import type { RequestTracer } from './tracing/request-tracer.js';
import type { RedisState } from './redis/redis-link.js';
import { silentLogger, type Logger } from './logging/create-logger.js';
import { yogaLogger } from './logging/yoga-logger.js';

/** What the app needs besides its config. */
export interface AppDeps {
  /** The upstream pipeline; the app never closes it. */
  upstream: Upstream;
  /** The rules every request passes, at every door (`admission/admission.ts`). */
  admission: Admission;
  /**
   * A key to prefill in GraphiQL's headers (the sandbox's public demo key), if any; never with
   * `AUTH_MODE=jwt`, where a key is not what a caller sends.
   */
  graphiqlApiKey?: string;
  /** What subscriptions share (pollers, open feeds); absent, the schema's subscriptions refuse. */
  live?: LiveDeps;
  /** The alerts (`ALERTS=on`); absent, the alert fields refuse. */
  alerts?: AlertsApi;
  /** True once the process has begun to shut down (main.ts); never, without it. */
  shuttingDown?: () => boolean;
  /** Where Yoga's own messages go; absent, nowhere. */
  logger?: Logger;
  /** Traces each GraphQL request (`OTEL_TRACES_EXPORTER=otlp`); absent, nothing is traced. */
  tracer?: RequestTracer;
  /** Whether the shared Redis is asked now (`REDIS_URL`): shown by the health endpoints. */
  redisState?: () => RedisState;
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

/** The CORS rules of every GraphQL endpoint and path (`CORS_ORIGINS`). */
function corsOf(config: Config): CorsPolicy {
  return corsPolicy({
    origins: config.corsOrigins,
    exposedHeaders: ['X-Request-Id', 'WWW-Authenticate', ...CREDIT_HEADERS, ...QUOTA_HEADERS],
    maxAgeSeconds: 600,
  });
}

/** What one GraphQL endpoint adds to the plugins both share. */
interface Endpoint {
  schema: GraphQLSchema;
  path: string;
  /** The subgraph's own server, when `/subgraph` is served on this one's port. */
  routed?: Parameters<typeof useSubgraphRoute>[1];
  /** Health, metrics and GraphiQL: the main endpoint's. */
  main?: boolean;
  /** Where its queries' answers are kept for repeat views. */
  answers?: KnownAnswers;
  extra?: Partial<YogaServerOptions<Record<string, unknown>, Context>>;
}

/**
 * A Yoga over one endpoint. Its plugins are the one ordered list below; each is an adapter over
 * the module that owns its rule (the admission, the credits, the limits).
 */
function graphqlServer(config: Config, deps: AppDeps, endpoint: Endpoint) {
  const { admission, tracer } = deps;
  const estimate = createEstimator(endpoint.schema, {
    defaultPageSize: config.defaultPageSize,
    maxPageSize: config.maxPageSize,
    secret: config.cursorSecret,
  });
  const contextDeps: ContextDeps = {
    config,
    admission,
    shared: deps.upstream.shared,
    live: deps.live,
    alerts: deps.alerts,
  };
  return createYoga<Record<string, unknown>, Context>({
    schema: endpoint.schema,
    graphqlEndpoint: endpoint.path,
    landingPage: false,
    graphiql: false,
    // Checked by useRequestBodyLimit, at a fraction of the cost.
    maxRequestBodySize: false,
    context: (initial) => {
      const door = initial as DoorContext & typeof initial;
      const { request } = initial;
      return contextOf(contextDeps, door, {
        signal: request.signal,
        fresh: wantsFresh(request.headers),
        trace: door.booking?.trace?.upstream,
      });
    },
    maskedErrors: { maskError },
    cors: false,
    plugins: [
      useCors(corsOf(config)),
      // /subgraph is a server of its own, with its own admission and reports.
      ...(endpoint.routed ? [useSubgraphRoute(SUBGRAPH_PATH, endpoint.routed)] : []),
      // Before anything that may answer: every response gets its X-Request-Id; the caller and
      // the document are decided before anything of the request runs.
      useAdmission(admission, endpoint.path),
      // Before every plugin that may answer the operation early: its span starts.
      ...(tracer ? [useTracing(tracer, endpoint.path)] : []),
      usePrivateAnswers(),
      useBufferedResponses(),
      ...(endpoint.main && deps.scrapeMetrics ? [useMetricsEndpoint(deps.scrapeMetrics)] : []),
      ...(endpoint.main
        ? [
            useHealth({
              shuttingDown: deps.shuttingDown ?? (() => false),
              breakerState: () => deps.upstream.breakerState(),
              redisState: deps.redisState,
            }),
          ]
        : []),
      // Before useRequestBodyLimit, which wraps whichever request parser is chosen.
      useRequestParamErrors(),
      useRequestBodyLimit(admission.maxMessageBytes),
      useDoorBody(),
      // Depth, aliases, tokens and directives, in the parse and validation every door runs.
      // Before useParserLimits, which wraps the parse function that Armor's token limit replaces.
      useQueryLimits(config),
      useParserLimits(),
      // `@defer` and `@stream`, where the schema declares them (not the subgraph's: a router
      // splits a deferred query itself).
      ...(endpoint.schema.getDirective('defer') ? [useIncrementalDelivery()] : []),
      // Before useCredits, so that an answer in parts has its errors placed before its credits
      // close it.
      usePartialErrors(),
      // Before useVariableErrors, so that a result it stops still reports its credits.
      useCredits(estimate),
      useVariableErrors(),
      // It leaves an answer in parts to Yoga's executor.
      useCompiledOperations(),
      // Last: it keeps the answer with the headers every other plugin set.
      ...(endpoint.answers ? [useAnswerKeeping(endpoint.answers)] : []),
    ],
    logging: yogaLogger(deps.logger ?? silentLogger()),
    ...endpoint.extra,
  });
}

/**
 * The GraphQL server as fetch handlers: `app.fetch(request)` in tests, and `listener` for
 * `createServer` in main.ts: the kept answers of repeat views (`src/answers/`), then the JSON lane
 * (`src/http/serve-json-posts.ts`), then the app, each handing on what it does not serve. Nothing
 * listens here. `app` serves POST and GET on /graphql with GraphiQL (bundled, no CDN) and the
 * health endpoints, and the same graph as an Apollo Federation subgraph on /subgraph
 * (`SUBGRAPH=on`); with `SUBGRAPH_PORT` the subgraph is `subgraph`, served apart.
 */
export function createApp(config: Config, deps: AppDeps) {
  const graphiqlHeaders = {
    ...(deps.graphiqlApiKey && config.authMode === 'api-key'
      ? { 'X-API-Key': deps.graphiqlApiKey }
      : {}),
    'X-Credit-Budget': String(config.creditBudgetDefault),
  };
  const subgraph =
    config.subgraph === 'on'
      ? graphqlServer(config, deps, { schema: subgraphSchema, path: SUBGRAPH_PATH })
      : undefined;
  const routed = config.subgraphPort === null ? subgraph : undefined;
  // Whole answers for repeat views, in the page cache's store; not with traces on, where every
  // request runs and is traced.
  const store = deps.upstream.shared.cache?.store;
  const answers =
    store && !deps.tracer
      ? new KnownAnswers(store, config.cacheTtlSeconds * 1000, deps.admission.version)
      : undefined;
  const app = graphqlServer(config, deps, {
    schema,
    path: GRAPHQL_PATH,
    routed,
    main: true,
    answers,
    extra: {
      // The bundled GraphiQL weighs some 17 MB of heap: load it on the first page view only.
      renderGraphiQL: async (options) =>
        (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options),
      graphiql: {
        title: 'Business-Signals GraphQL',
        defaultQuery: EXAMPLE_QUERY,
        headers: JSON.stringify(graphiqlHeaders),
      },
    },
  });
  const shuttingDown = deps.shuttingDown ?? (() => false);
  // Plain JSON POSTs through Yoga's envelop without its Fetch-API layer; not with traces on, whose
  // spans are made by Yoga's hooks.
  const yoga = app as unknown as RunListener;
  const run: RunListener = deps.tracer
    ? yoga
    : serveJsonPosts(app, yoga, {
        admission: deps.admission,
        path: GRAPHQL_PATH,
        cors: corsOf(config),
        shuttingDown,
        answers,
      });
  const listener: RunListener = answers
    ? serveKnownAnswers(run, {
        answers,
        admission: deps.admission,
        path: GRAPHQL_PATH,
        shuttingDown,
      })
    : run;
  return { app, listener, subgraph: routed ? undefined : subgraph };
}

/** A fetch handler that also serves node's `http.createServer`. */
export type App = ReturnType<typeof createApp>['app'];
