import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import {
  startOtlpReceiver,
  SPAN_KIND,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../helpers/otlp-receiver.js';
import {
  freePort,
  killGatewayProcesses,
  startGatewayProcess,
  type GatewayProcess,
} from '../helpers/start-process.js';
import { SMALL_SIZES, startStack } from '../helpers/start-stack.js';

/**
 * Traces as an operator turns them on: `node dist/main.js` (what `npm start` runs) with the
 * standard variables only, exporting `http/json` to an OTLP receiver in this test, in front of a
 * sandbox in this test (so that a fault can be scripted and the requests it saw read). Every other
 * setting is the default; the batch processor's delay (`OTEL_BSP_SCHEDULE_DELAY`, read by the SDK)
 * is cut to 50 ms so that spans arrive while the test waits.
 */

const DIR = mkdtempSync(join(tmpdir(), 'traces-test-'));
const RECORDER = pathToFileURL(new URL('../helpers/record-imports.mjs', import.meta.url).pathname);

/** `node --import` of the recorder: every module the process loads, written to `file`. */
const recordImports = (file: string) => ({
  NODE_OPTIONS: `--import=${RECORDER.href}`,
  RECORD_IMPORTS_TO: file,
});

/** A caller's W3C trace context: trace id, its own span id, sampled. */
function callerContext(traceId: string, spanId: string) {
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const CALLER = callerContext('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7');
const CACHED_CALLER = callerContext('0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331');
const PAGING_CALLER = callerContext('5a3c1e2b9d8f7a6b5c4d3e2f1a0b9c8d', '1122334455667788');

/** A list, and a nested connection per record: one upstream request per level (and company). */
const NESTED = `query Nested {
  fundingEvents(first: 2) {
    nodes { uuid company { name execMoves(first: 1) { nodes { role } } } }
  }
}`;

const PAGE = `query Page($after: String) {
  fundingEvents(first: 2, after: $after) { nodes { uuid } pageInfo { endCursor } }
}`;

let receiver: OtlpReceiver;
let sandbox: Sandbox;
let gateway: GatewayProcess;
const imports = join(DIR, 'traced-imports.txt');
beforeAll(async () => {
  receiver = await startOtlpReceiver();
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
  gateway = await startGatewayProcess(
    {
      UPSTREAM_URL: sandbox.url,
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'signals-gateway-under-test',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      ...recordImports(imports),
    },
    { dist: true },
  );
});
afterAll(async () => {
  killGatewayProcesses();
  await sandbox?.close();
  await receiver?.close();
  rmSync(DIR, { recursive: true, force: true });
});

async function post(query: string, headers: Record<string, string>, variables = {}) {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as any;
}

/** The spans of `traceId` once `count` of them have arrived (exported every 50 ms). */
async function spansOf(traceId: string, count: number): Promise<ReceivedSpan[]> {
  for (let waited = 0; ; waited += 25) {
    const spans = receiver.spans().filter((span) => span.traceId === traceId);
    if (spans.length >= count || waited > 10_000) return spans;
    await sleep(25);
  }
}

const ofKind = (spans: ReceivedSpan[], kind: number) => spans.filter((span) => span.kind === kind);

/** The span id a `traceparent` names (the upstream request's parent: its client span). */
const spanIdOf = (traceparent: string | null) => traceparent?.split('-')[2];

describe('one traced operation, continuing the caller’s trace', () => {
  let response: any;
  let spans: ReceivedSpan[];
  let sent: ReturnType<Sandbox['requestLog']>;
  beforeAll(async () => {
    sandbox.reset();
    // The first upstream request fails once: it is retried.
    sandbox.scriptFaults([{ kind: 'serverError', status: 503 }]);
    response = await post(NESTED, {
      'x-api-key': sandbox.keys.demo,
      traceparent: CALLER.traceparent,
    });
    sent = sandbox.requestLog();
    // The server span, the operation's, and a client span per request sent.
    spans = await spansOf(CALLER.traceId, 2 + sent.length);
  });

  it('answers as it would untraced', () => {
    expect(response.errors).toBeUndefined();
    expect(response.extensions).toMatchObject({
      upstreamRequests: sent.length,
      upstreamRetries: 1,
    });
    // The list, its retry, and the companies' executive moves (one request per company).
    expect(sent.map((entry) => [entry.path, entry.status]).slice(0, 2)).toEqual([
      ['/v1/funding-events', 503],
      ['/v1/funding-events', 200],
    ]);
    expect(sent.slice(2).every((entry) => entry.path === '/v1/exec-moves')).toBe(true);
    expect(sent.length).toBeGreaterThanOrEqual(3);
  });

  it("a server span under the caller's span, the operation's under it, a client span per request under that", () => {
    expect(spans).toHaveLength(2 + sent.length);
    const [server] = ofKind(spans, SPAN_KIND.server);
    const [operation] = ofKind(spans, SPAN_KIND.internal);
    const clients = ofKind(spans, SPAN_KIND.client);
    expect(server).toMatchObject({
      name: 'POST /graphql',
      parentSpanId: CALLER.spanId,
      service: 'signals-gateway-under-test',
      attributes: {
        'http.request.method': 'POST',
        'http.route': '/graphql',
        'http.response.status_code': 200,
      },
    });
    expect(operation).toMatchObject({
      name: 'query Nested',
      parentSpanId: server!.spanId,
      attributes: { 'graphql.operation.type': 'query', 'graphql.operation.name': 'Nested' },
    });
    expect(clients).toHaveLength(sent.length);
    for (const client of clients) expect(client.parentSpanId).toBe(operation!.spanId);
  });

  it('the operation’s span carries its credits and upstream requests, as the response reports them', () => {
    const [operation] = ofKind(spans, SPAN_KIND.internal);
    const { credits } = response.extensions;
    expect(operation!.attributes).toMatchObject({
      'gateway.credits.used': credits.used,
      'gateway.credits.saved': 0,
      'gateway.credits.estimate': credits.estimate,
      'gateway.credits.budget': credits.budget,
      'gateway.upstream.requests': sent.length,
      'gateway.upstream.retries': 1,
    });
    expect(operation!.status.code ?? 0).toBe(0);
  });

  it('each request sent carries its own client span as its traceparent; the retry is a span of its own', () => {
    const clients = ofKind(spans, SPAN_KIND.client);
    const byId = new Map(clients.map((span) => [span.spanId, span]));
    for (const entry of sent) {
      expect(entry.traceparent).toMatch(new RegExp(`^00-${CALLER.traceId}-[0-9a-f]{16}-01$`));
      const span = byId.get(spanIdOf(entry.traceparent)!);
      expect(span).toMatchObject({
        name: `GET ${entry.path}`,
        attributes: { 'http.request.method': 'GET', 'url.path': entry.path },
      });
      expect(span!.attributes['http.response.status_code']).toBe(entry.status);
    }
    const [failed, retried] = sent.map((entry) => byId.get(spanIdOf(entry.traceparent)!)!);
    expect(failed).toMatchObject({
      attributes: { 'error.type': '503' },
      status: { code: 2 },
    });
    expect(failed!.attributes['http.request.resend_count']).toBeUndefined();
    expect(retried!.attributes).toMatchObject({
      'http.request.resend_count': 1,
      'gateway.credits.used': sent[1]!.records,
    });
  });

  it("the operation's log line names the trace", () => {
    const line = gateway
      .output()
      .split('\n')
      .filter((text) => text.includes('"msg":"operation"'))
      .map((text) => JSON.parse(text))
      .find((entry) => entry.operation === 'Nested');
    expect(line).toMatchObject({ traceId: CALLER.traceId, upstreamRetries: 1 });
  });
});

describe('the same operation again, from the cache', () => {
  it('sends nothing: no client span, a cache hit event per page on the operation’s span', async () => {
    sandbox.reset();
    // The key as a bearer token this time: neither reaches a span.
    const response = await post(NESTED, {
      authorization: `Bearer ${sandbox.keys.demo}`,
      traceparent: CACHED_CALLER.traceparent,
    });
    expect(response.errors).toBeUndefined();
    expect(sandbox.requestLog()).toEqual([]);
    const spans = await spansOf(CACHED_CALLER.traceId, 2);
    expect(ofKind(spans, SPAN_KIND.client)).toEqual([]);
    const [server] = ofKind(spans, SPAN_KIND.server);
    const [operation] = ofKind(spans, SPAN_KIND.internal);
    expect(server!.parentSpanId).toBe(CACHED_CALLER.spanId);
    expect(operation!.parentSpanId).toBe(server!.spanId);
    const hits = operation!.events.filter((event) => event.name === 'gateway.cache.hit');
    expect(hits.map((hit) => hit.attributes['url.path']).sort()).toEqual(
      ['/v1/funding-events', ...Array(hits.length - 1).fill('/v1/exec-moves')].sort(),
    );
    const saved = hits.reduce(
      (sum, hit) => sum + (hit.attributes['gateway.credits.saved'] as number),
      0,
    );
    expect(saved).toBe(response.extensions.credits.saved);
    expect(operation!.attributes).toMatchObject({
      'gateway.credits.used': 0,
      'gateway.credits.saved': response.extensions.credits.saved,
      'gateway.upstream.requests': 0,
    });
  });
});

describe('what is never exported', () => {
  it('no key, token or cursor in any span, attribute or event; paths without their query', async () => {
    sandbox.reset();
    // Fresh pages, both from the service: the second with its cursor.
    const headers = {
      'x-api-key': sandbox.keys.demo,
      traceparent: PAGING_CALLER.traceparent,
      'cache-control': 'no-cache',
    };
    const first = await post(PAGE, headers);
    const after = first.data.fundingEvents.pageInfo.endCursor as string;
    const second = await post(PAGE, headers, { after });
    expect(second.errors).toBeUndefined();
    const upstreamCursor = sandbox.requestLog()[1]?.params['cursor']?.[0];
    expect(upstreamCursor).toEqual(expect.any(String));
    // Two operations: a server span, an operation's span and a client span each.
    const spans = await spansOf(PAGING_CALLER.traceId, 6);
    expect(spans).toHaveLength(6);

    const exported = receiver.text();
    expect(exported.length).toBeGreaterThan(0);
    for (const secret of [sandbox.keys.demo, after, upstreamCursor!]) {
      expect(exported).not.toContain(secret);
    }
    for (const span of receiver.spans()) {
      const path = span.attributes['url.path'];
      if (path !== undefined) expect(path).toMatch(/^\/(graphql|v1\/[a-z-]+)$/);
    }
  });
});

describe('what is loaded', () => {
  it('with traces on: the SDK and the exporter of the protocol set, not the other', async () => {
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toEqual([0, null]);
    const loaded = readFileSync(imports, 'utf8');
    expect(loaded).toContain('@opentelemetry/sdk-trace-base');
    expect(loaded).toContain('@opentelemetry/exporter-trace-otlp-http');
    expect(loaded).not.toContain('@opentelemetry/exporter-trace-otlp-proto');
  });

  it('with traces off (the default): no SDK, no exporter, no tracing code of the gateway', async () => {
    const file = join(DIR, 'untraced-imports.txt');
    const untraced = await startGatewayProcess(
      { SANDBOX_PORT: String(await freePort()), ...recordImports(file) },
      { dist: true },
    );
    const response = await fetch(untraced.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': 'demo-key',
        traceparent: CALLER.traceparent,
      },
      body: JSON.stringify({ query: NESTED }),
    });
    expect(((await response.json()) as any).errors).toBeUndefined();
    untraced.child.kill('SIGTERM');
    expect(await untraced.exited).toEqual([0, null]);
    const loaded = readFileSync(file, 'utf8');
    // The recorder saw the gateway's bundle and the chunk it loads on demand: it works.
    expect(loaded).toContain('dist/main.js');
    expect(loaded).toMatch(/dist\/chunks\/sandbox-\w+\.js/);
    for (const module of [
      '@opentelemetry/sdk-trace',
      '@opentelemetry/exporter-trace-otlp',
      '@opentelemetry/otlp-exporter-base',
      '@opentelemetry/resources',
      // The gateway's tracing code: its chunk in the bundle (start-tracing-<hash>.js).
      'start-tracing',
      'otel-request-tracer',
    ]) {
      expect(loaded).not.toContain(module);
    }
    expect(untraced.output()).not.toContain('traceId');
  });
});

describe('operations that fail', () => {
  it('refused over its budget: the operation’s span with its code, no client span; unparsable: the server span’s', async () => {
    const failing = await startOtlpReceiver();
    // In process, the settings as config.
    const stack = await startStack({
      config: { tracesExporter: 'otlp', otlpEndpoint: failing.url, otlpProtocol: 'http/json' },
    });
    try {
      const refused = await stack.gql(NESTED, {}, { headers: { 'x-credit-budget': '1' } });
      expect(refused.errors?.[0]?.extensions?.code).toBe('CREDIT_BUDGET_EXCEEDED');
      const unparsable = await stack.gql('{ fundingEvents(first: 2) {');
      expect(unparsable.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
      expect(stack.sandbox.requestLog()).toEqual([]);
    } finally {
      await stack.close();
      await failing.close();
    }
    const spans = failing.spans();
    expect(ofKind(spans, SPAN_KIND.client)).toEqual([]);
    const [operation] = ofKind(spans, SPAN_KIND.internal);
    expect(operation).toMatchObject({
      name: 'query Nested',
      attributes: {
        'gateway.error.codes': ['CREDIT_BUDGET_EXCEEDED'],
        'gateway.credits.budget': 1,
        'gateway.upstream.requests': 0,
      },
      status: { code: 2, message: 'CREDIT_BUDGET_EXCEEDED' },
    });
    const servers = ofKind(spans, SPAN_KIND.server);
    expect(servers.map((span) => span.attributes['http.response.status_code'])).toEqual([200, 400]);
    expect(servers[1]).toMatchObject({
      attributes: { 'gateway.error.codes': ['GRAPHQL_PARSE_FAILED'] },
      status: { code: 2 },
    });
    expect(servers[0]!.attributes['gateway.error.codes']).toBeUndefined();
  });
});

describe('http/protobuf, the default protocol', () => {
  it('exports a protobuf body to /v1/traces, and flushes it at shutdown', async () => {
    const protobuf = await startOtlpReceiver();
    // In process, the settings as config: the batch processor keeps its 5 s delay, so what
    // arrives was sent by the shutdown.
    const stack = await startStack({
      config: { tracesExporter: 'otlp', otlpEndpoint: protobuf.url },
    });
    try {
      const response = await stack.gql(
        NESTED,
        {},
        { headers: { traceparent: CALLER.traceparent } },
      );
      expect(response.errors).toBeUndefined();
      expect(protobuf.exports).toEqual([]);
    } finally {
      await stack.close();
      await protobuf.close();
    }
    expect(protobuf.exports.map(({ path, contentType }) => [path, contentType])).toEqual([
      ['/v1/traces', 'application/x-protobuf'],
    ]);
    const { body } = protobuf.exports[0]!;
    // Protobuf keeps ids as raw bytes and strings as UTF-8.
    expect(body.includes(Buffer.from(CALLER.traceId, 'hex'))).toBe(true);
    expect(body.includes(Buffer.from('business-signals-gateway'))).toBe(true);
    expect(body.includes(Buffer.from('query Nested'))).toBe(true);
    expect(body.includes(Buffer.from(stack.sandbox.keys.demo))).toBe(false);
  });
});
