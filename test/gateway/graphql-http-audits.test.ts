import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { defaultConfig } from '../../src/config.js';
import { createGateway, type Gateway } from '../../src/create-gateway.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { SMALL_SIZES } from '../helpers/start-stack.js';

let sandbox: Sandbox;
let gateway: Gateway;
let app: App;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
  gateway = await createGateway(defaultConfig, {
    upstreamUrl: sandbox.url,
    processMetrics: false,
  });
  app = gateway.app;
});
afterAll(async () => {
  await gateway?.close();
  await sandbox?.close();
});

type Fetch = (...args: Parameters<App['fetch']>) => ReturnType<App['fetch']>;

/** The same request with its body as a stream: no Content-Length, as a chunked upload has none. */
const chunked: Fetch = (input, init) => {
  if (typeof init?.body !== 'string') return app.fetch(input, init);
  const bytes = new TextEncoder().encode(init.body);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 16) controller.enqueue(bytes.slice(at, at + 16));
      controller.close();
    },
  });
  return app.fetch(input, { ...init, body, duplex: 'half' } as RequestInit);
};

/**
 * graphql-http's audits of the GraphQL-over-HTTP spec, one test each, on the default config (APQ
 * on). useRequestBodyLimit and useRequestParamErrors replace parts of Yoga's request parsing: a
 * body with a Content-Length is parsed by Yoga, one without it is read by useRequestBodyLimit, so
 * the audits run both ways. Every audit passes, the MAY ones too, and all are held to it.
 */
describe.each([
  // Read when an audit runs: the app is made in beforeAll, after the audits are listed.
  ['with a Content-Length', ((...args) => app.fetch(...args)) as Fetch],
  ['chunked, without a Content-Length', chunked],
])('GraphQL-over-HTTP audits against app.fetch, bodies %s', (_how, fetchFn) => {
  for (const audit of serverAudits({ url: 'http://gateway/graphql', fetchFn })) {
    it(audit.name, async () => {
      const result = await audit.fn();
      expect(result.status === 'ok' ? 'ok' : `${result.status}: ${result.reason}`).toBe('ok');
    });
  }
});
