/* global process, URL, Buffer */
/**
 * The floor of any gateway built on graphql-yoga, for `npm run bench`: the floor's upstream work
 * (bench/floor-upstream.mjs: one undici GET, `JSON.parse`, the fields copied) under a bare Yoga
 * over node:http, with the gateway's own schema (schema.graphql) and operations compiled by
 * graphql-jit as the gateway's are, the credits and upstream requests in `extensions`. Yoga
 * parses, validates, executes and writes the answer; three resolvers (the two lists, and a
 * company's exec moves for the walk), nothing of ours: no signed ids or cursors, no DataLoader,
 * no errors, budget, quota, logs or metrics.
 *
 * Beside the floor (no GraphQL), its CPU per request is what Yoga's HTTP layer and a GraphQL
 * execution cost at the least; beside the gateway, what everything of ours costs.
 *
 *   UPSTREAM_URL=http://127.0.0.1:4000 PORT=4001 node bench/yoga-floor-server.mjs
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { createSchema, createYoga } from 'graphql-yoga';
import { fetchExecMoves, fetchList } from './floor-upstream.mjs';

const typeDefs = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8');

/** Adds one upstream page's credits to the query's, for `extensions` (resolvers may run at once). */
function charge(context, creditsUsed) {
  context.creditsUsed = (context.creditsUsed ?? 0) + creditsUsed;
  context.upstreamRequests = (context.upstreamRequests ?? 0) + 1;
}

const list = (name) => async (_root, _args, context) => {
  const { nodes, creditsUsed } = await fetchList(name, context.request.headers.get('x-api-key'));
  charge(context, creditsUsed);
  return { nodes };
};

/**
 * The walk's step: one GET per company (its `uuid`, which the mapped record keeps), as the
 * gateway sends it. No DataLoader: the walk's 20 events have 20 different companies, so the
 * gateway's batching saves nothing there either (21 requests a query on both).
 */
async function execMoves(company, { first }, context) {
  const apiKey = context.request.headers.get('x-api-key');
  const { nodes, creditsUsed } = await fetchExecMoves(company.uuid, first ?? 20, apiKey);
  charge(context, creditsUsed);
  return { nodes };
}

const schema = createSchema({
  typeDefs,
  resolvers: {
    Query: { fundingEvents: list('fundingEvents'), companies: list('companies') },
    Company: { execMoves },
  },
});

/** graphql-jit, compiled once per document (the bench's documents have one operation each). */
const compiled = new WeakMap();
function execute(args) {
  let entry = compiled.get(args.document);
  if (!entry) {
    const result = compileQuery(args.schema, args.document, args.operationName ?? undefined);
    if (!isCompiledQuery(result)) return result;
    compiled.set(args.document, (entry = result));
  }
  return entry.query(args.rootValue, args.contextValue, args.variableValues);
}

const yoga = createYoga({
  schema,
  logging: false,
  landingPage: false,
  graphiql: false,
  plugins: [
    {
      // The credits in `extensions`, as the floor writes them.
      onExecute: ({ setExecuteFn }) => {
        setExecuteFn(execute);
        return {
          onExecuteDone: ({ args, result, setResult }) => {
            const { creditsUsed = 0, upstreamRequests = 0 } = args.contextValue;
            setResult({
              ...result,
              extensions: { credits: { used: creditsUsed }, upstreamRequests },
            });
          },
        };
      },
    },
  ],
});

/**
 * `ENVELOP=1` (bench/experiments/envelop-floor.ts): the same Yoga's envelop (its parse and
 * validation cache, the plugin above) called from node:http directly, without Yoga's Fetch-API
 * layer (no `Request`, `Response` or their promises): what a thin adapter over the envelop could
 * take off. POST with a JSON body only; enough for the bench's queries.
 */
function viaEnvelop(req, res) {
  // A readiness probe (GET): answered at once.
  if (req.method !== 'POST') return void res.end('{}');
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    const params = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const request = { headers: { get: (name) => req.headers[name.toLowerCase()] ?? null } };
    const enveloped = yoga.getEnveloped({ request, params });
    const document = enveloped.parse(params.query);
    const errors = enveloped.validate(enveloped.schema, document);
    const result =
      errors.length > 0
        ? { errors }
        : await enveloped.execute({
            schema: enveloped.schema,
            document,
            contextValue: await enveloped.contextFactory(),
            variableValues: params.variables,
            operationName: params.operationName,
          });
    const body = Buffer.from(JSON.stringify(result));
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': body.length,
    });
    res.end(body);
  });
}

createServer(process.env.ENVELOP ? viaEnvelop : yoga).listen(
  Number(process.env.PORT ?? 4001),
  process.env.HOST ?? '127.0.0.1',
);

// Exits through Node's own path on SIGTERM, so that `--cpu-prof` writes its profile.
process.on('SIGTERM', () => process.exit(0));
