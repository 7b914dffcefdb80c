import { createHash } from 'node:crypto';
import { request as httpRequest, createServer, type Server } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig, type Config } from '../../src/config.js';
import { createGateway, type Gateway } from '../../src/create-gateway.js';
import { GRAPHQL_PATH } from '../../src/app.js';
import { corsPolicy } from '../../src/http/cors-policy.js';
import { acceptedJsonType, serveJsonPosts } from '../../src/http/serve-json-posts.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { SMALL_SIZES, startStack, type Stack } from '../helpers/start-stack.js';

/**
 * The JSON lane (`src/http/serve-json-posts.ts`) runs plain JSON POSTs through Yoga's envelop
 * without Yoga's Fetch layer. A request without a `Content-Length` (a chunked body) is Yoga's, so
 * each request below is sent both ways to the gateway `npm start` builds (defaults: cache on,
 * default budget, CORS `*`), and the two answers must be the same: status, headers and body, but
 * for what is each request's own (its id, date, and the balance, which the first one lowered).
 */

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** POSTs `body` to `url`, with its `Content-Length` or chunked, as node's client sends it. */
function post(
  url: string,
  body: string,
  headers: Record<string, string>,
  { chunked }: { chunked: boolean },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method: 'POST',
        headers: chunked ? headers : { ...headers, 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    request.on('error', reject);
    if (chunked) {
      // Two writes: node sends a body without a length as chunks.
      request.write(body.slice(0, 1));
      request.end(body.slice(1));
    } else request.end(body);
  });
}

/** What of an answer is not the request's own. */
function comparable(answer: Answer) {
  const headers = { ...answer.headers };
  for (const name of [
    'date',
    'x-request-id',
    'content-length',
    'transfer-encoding',
    'connection',
    'keep-alive',
    'x-credits-remaining',
  ]) {
    delete headers[name];
  }
  let body: unknown = answer.body;
  try {
    const parsed = JSON.parse(answer.body) as {
      extensions?: { credits?: { remaining?: unknown } };
      errors?: { extensions?: { requestId?: unknown; originalError?: { message?: unknown } } }[];
    };
    if (parsed.extensions?.credits) delete parsed.extensions.credits.remaining;
    for (const error of parsed.errors ?? []) {
      // The service's own request id; and the JSON parser's wording, which differs between a
      // body read whole (with its Content-Length) and one read as chunks, lane or not.
      delete error.extensions?.requestId;
      delete error.extensions?.originalError?.message;
    }
    body = parsed;
  } catch {
    // Not JSON: compared as it is.
  }
  return { status: answer.status, headers, body };
}

const LIST = 'query Rounds($first: Int) { fundingEvents(first: $first) { nodes { id round } } }';
const FRESH = { 'cache-control': 'no-cache' };

describe('the JSON lane answers as Yoga does', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack?.close());

  const apq = createHash('sha256').update('{ __typename }').digest('hex');
  const cases: [string, object | string, Record<string, string>][] = [
    ['a list', { query: LIST, variables: { first: 3 } }, FRESH],
    [
      'a list, Apollo Client accept',
      { query: LIST, variables: { first: 2 } },
      {
        ...FRESH,
        accept: 'application/graphql-response+json,application/json;q=0.9',
      },
    ],
    [
      'a list, application/json',
      { query: LIST, variables: { first: 2 } },
      {
        ...FRESH,
        accept: 'application/json',
      },
    ],
    ['a list from a listed origin', { query: LIST }, { ...FRESH, origin: 'https://app.example' }],
    ['a validation error', { query: '{ nope }' }, {}],
    [
      'a validation error, graphql-response+json',
      { query: '{ nope }' },
      {
        accept: 'application/graphql-response+json',
      },
    ],
    ['a syntax error', { query: '{ fundingEvents(' }, {}],
    ['a variable of the wrong type', { query: LIST, variables: { first: 'many' } }, {}],
    ['a page above the limit', { query: LIST, variables: { first: 101 } }, {}],
    ['an unknown operation name', { query: LIST, operationName: 'Other' }, {}],
    ['over the budget', { query: LIST, variables: { first: 50 } }, { 'x-credit-budget': '5' }],
    ['a bad budget', { query: LIST }, { 'x-credit-budget': 'lots' }],
    ['an estimate only', { query: LIST, variables: { first: 7 } }, { 'x-credit-estimate': 'only' }],
    ['no key', { query: LIST }, { 'x-api-key': '' }],
    ['an unknown key', { query: LIST }, { 'x-api-key': 'not-a-key' }],
    ['an unexpected parameter', { query: LIST, what: 1 }, {}],
    ['variables not an object', { query: LIST, variables: [1] }, {}],
    ['no query', { variables: {} }, {}],
    [
      'an unknown persisted query',
      {
        extensions: { persistedQuery: { version: 1, sha256Hash: apq } },
      },
      {},
    ],
    ['a batch', [{ query: '{ __typename }' }], {}],
    ['not JSON', '{"query":', {}],
    [
      'a mutation refused',
      {
        query: 'mutation { deleteAlert(id: "nope") { id } }',
      },
      {},
    ],
    ['html only', { query: '{ __typename }' }, { accept: 'text/html' }],
  ];

  it.each(cases)('%s', async (_what, body, extra) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    // Each run fetches its pages: the second would otherwise be served from the first's.
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-api-key': stack.sandbox.keys.demo,
      ...FRESH,
      ...extra,
    };
    if (headers['x-api-key'] === '') delete headers['x-api-key'];
    const lane = await post(stack.url, text, headers, { chunked: false });
    const yoga = await post(stack.url, text, headers, { chunked: true });
    expect(comparable(lane)).toEqual(comparable(yoga));
    expect(lane.headers['x-request-id']).toBeTruthy();
  });
});

describe('which requests the lane takes', () => {
  let sandbox: Sandbox;
  let gateway: Gateway;
  let server: Server;
  let url: string;
  const handedOn: string[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
    const config: Config = {
      ...defaultConfig,
      port: 0,
      host: '127.0.0.1',
      alertsDataDir: mkdtempSync(join(tmpdir(), 'gateway-alerts-')),
    };
    gateway = await createGateway(config, { upstreamUrl: sandbox.url, processMetrics: false });
    const yoga = gateway.app as unknown as Parameters<typeof serveJsonPosts>[1];
    const lane = serveJsonPosts(
      gateway.app,
      (request, response, door) => {
        handedOn.push(`${request.method} ${request.url}`);
        return yoga(request, response, door);
      },
      {
        admission: gateway.admission,
        path: GRAPHQL_PATH,
        cors: corsPolicy({ origins: ['*'], exposedHeaders: [], maxAgeSeconds: 600 }),
        shuttingDown: () => false,
      },
    );
    server = createServer(lane);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await gateway?.close();
    await sandbox?.close();
  });

  const key = () => ({ 'content-type': 'application/json', 'x-api-key': sandbox.keys.demo });

  it('a plain JSON POST runs in the lane, with its data and credits', async () => {
    handedOn.length = 0;
    const answer = await post(`${url}/graphql`, JSON.stringify({ query: LIST }), key(), {
      chunked: false,
    });
    expect(answer.status).toBe(200);
    const body = JSON.parse(answer.body);
    expect(body.data.fundingEvents.nodes.length).toBeGreaterThan(0);
    expect(body.extensions.credits.used).toBeGreaterThan(0);
    expect(answer.headers['x-credits-used']).toBe(String(body.extensions.credits.used));
    expect(handedOn).toEqual([]);
  });

  it('a validation error is answered in the lane', async () => {
    handedOn.length = 0;
    const answer = await post(`${url}/graphql`, JSON.stringify({ query: '{ nope }' }), key(), {
      chunked: false,
    });
    expect(JSON.parse(answer.body).errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(handedOn).toEqual([]);
  });

  it.each([
    ['chunked', JSON.stringify({ query: LIST }), {}, true],
    ['a syntax error', JSON.stringify({ query: '{' }), {}, false],
    ['a stream asked', JSON.stringify({ query: LIST }), { accept: 'text/event-stream' }, false],
    [
      'an unknown persisted query',
      JSON.stringify({
        extensions: { persistedQuery: { version: 1, sha256Hash: '0'.repeat(64) } },
      }),
      {},
      false,
    ],
    ['a batch', JSON.stringify([{ query: LIST }]), {}, false],
    [
      'a form',
      'query=%7B__typename%7D',
      { 'content-type': 'application/x-www-form-urlencoded' },
      false,
    ],
  ])('%s is handed to Yoga', async (_what, body, extra: Record<string, string>, chunked) => {
    handedOn.length = 0;
    const headers: Record<string, string> = { ...key(), ...extra };
    if (headers['x-api-key'] === '') delete headers['x-api-key'];
    const answer = await post(`${url}/graphql`, body, headers, { chunked });
    expect(answer.status).toBeGreaterThanOrEqual(200);
    expect(handedOn).toEqual(['POST /graphql']);
  });
});

describe("the lane's Accept negotiation is Yoga's", () => {
  it.each([
    [undefined, 'application/json'],
    ['*/*', 'application/json'],
    ['application/json', 'application/json'],
    ['application/graphql-response+json', 'application/graphql-response+json'],
    ['application/graphql-response+json, application/json', 'application/graphql-response+json'],
    ['application/json, application/graphql-response+json', 'application/json'],
    [
      'application/graphql-response+json,application/json;q=0.9',
      'application/graphql-response+json',
    ],
    ['application/*', 'application/json'],
    ['application/json; charset=iso-8859-1', null],
    ['text/html', null],
    ['application/json, text/event-stream', null],
    ['multipart/mixed, application/json', null],
  ])('%s → %s', (accept, type) => {
    expect(acceptedJsonType(accept)).toBe(type);
  });
});
