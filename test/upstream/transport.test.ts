import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createTransport } from '../../src/upstream/transport.js';
import { UpstreamError } from '../../src/upstream/upstream-error.js';
import { envelope, pageRequest, records } from '../helpers/mock-service.js';

/**
 * The transport over a real connection to a local server that holds each request until the test
 * answers it: what an exchange does when it is answered, timed out, or given up by its caller,
 * queued or sent.
 */
async function heldService(options: { connections: number; timeoutMs: number }) {
  const held: ServerResponse[] = [];
  const closed: string[] = [];
  const server = createServer((request, response) => {
    held.push(response);
    request.socket.once('close', () => closed.push(request.url ?? ''));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const transport = createTransport({ baseUrl: `http://127.0.0.1:${port}`, ...options });
  const until = async (done: () => boolean) => {
    for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
  };
  const close = async () => {
    await transport.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { transport, held, closed, until, close };
}

const failureOf = (call: Promise<unknown>) =>
  call.then(
    () => null,
    (error: unknown) => (error instanceof UpstreamError ? error.failure : String(error)),
  );

let service: Awaited<ReturnType<typeof heldService>> | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

describe('the transport', () => {
  it('answers the envelope and its size', async () => {
    service = await heldService({ connections: 1, timeoutMs: 5_000 });
    const page = service.transport.call(pageRequest());
    await service.until(() => service!.held.length === 1);
    const body = JSON.stringify(envelope(records(2)));
    service.held[0]!.writeHead(200, { 'content-type': 'application/json' }).end(body);
    expect(await page).toEqual({ envelope: envelope(records(2)), bytes: body.length });
  });

  it('fails a request with no complete answer in time as a timeout', async () => {
    service = await heldService({ connections: 1, timeoutMs: 100 });
    expect(await failureOf(service.transport.call(pageRequest()))).toBe('timeout');
  });

  it('gives up a request its caller aborted once sent, and closes its connection', async () => {
    service = await heldService({ connections: 1, timeoutMs: 5_000 });
    const caller = new AbortController();
    const page = failureOf(service.transport.call(pageRequest({ signal: caller.signal })));
    await service.until(() => service!.held.length === 1);
    caller.abort();
    expect(await page).toBe('aborted');
    await service.until(() => service!.closed.length === 1);
    expect(service.closed).toHaveLength(1);
  });

  it('gives up a request its caller aborted while it waited for a connection, unsent', async () => {
    service = await heldService({ connections: 1, timeoutMs: 5_000 });
    const first = service.transport.call(pageRequest({ filterQuery: 'search=first' }));
    await service.until(() => service!.held.length === 1);
    const caller = new AbortController();
    const second = failureOf(
      service.transport.call(pageRequest({ filterQuery: 'search=second', signal: caller.signal })),
    );
    expect(service.transport.queued()).toBe(1);
    caller.abort();
    expect(await second).toBe('queued');
    service.held[0]!.writeHead(200).end(JSON.stringify(envelope(records(1))));
    await first;
    await new Promise((r) => setTimeout(r, 50));
    expect(service.held).toHaveLength(1);
  });

  it('gives up at once a request whose signal had aborted before the call', async () => {
    service = await heldService({ connections: 1, timeoutMs: 5_000 });
    const caller = new AbortController();
    caller.abort();
    expect(await failureOf(service.transport.call(pageRequest({ signal: caller.signal })))).toBe(
      'queued',
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(service.held).toHaveLength(0);
  });
});
