import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { freePort } from '../helpers/start-process.js';
import { SMALL_SIZES, startGateway } from '../helpers/start-stack.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
});
afterAll(() => sandbox?.close());

const QUERY = JSON.stringify({ query: '{ companies(first: 1) { nodes { name } } }' });

async function post(origin: string, path: string) {
  const response = await fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': sandbox.keys.demo },
    body: QUERY,
  });
  return { status: response.status, body: await response.text() };
}

describe('REQUEST_TIMEOUT_MS', () => {
  it('closes a connection whose body trickles in, with 408, at the timeout', async () => {
    // 1 s instead of 30 s, so that the test is short.
    const gateway = await startGateway(sandbox, {
      config: { requestTimeoutMs: 1_000, headersTimeoutMs: 1_000 },
    });
    const socket = connect(Number(new URL(gateway.origin).port), '127.0.0.1');
    try {
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
          'Content-Length: 1000000\r\n\r\n{',
      );
      const started = Date.now();
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      const trickle = setInterval(() => socket.writable && socket.write(' '), 200);
      await new Promise((resolve) => socket.once('close', resolve));
      clearInterval(trickle);
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
      // Cut within the timeout and the server's check interval (1 s each), not left open.
      expect(Date.now() - started).toBeLessThan(4_000);
    } finally {
      socket.destroy();
      await gateway.close();
    }
  });
});

describe('SUBGRAPH and SUBGRAPH_PORT', () => {
  it('SUBGRAPH=off serves no /subgraph; /graphql is unchanged', async () => {
    const gateway = await startGateway(sandbox, { config: { subgraph: 'off' } });
    try {
      expect((await post(gateway.origin, '/subgraph')).status).toBe(404);
      expect((await post(gateway.origin, '/graphql')).status).toBe(200);
    } finally {
      await gateway.close();
    }
  });

  it('SUBGRAPH_PORT serves /subgraph there and not on PORT', async () => {
    const subgraphPort = await freePort();
    const gateway = await startGateway(sandbox, { config: { subgraphPort } });
    try {
      expect((await post(gateway.origin, '/subgraph')).status).toBe(404);
      const apart = await post(`http://127.0.0.1:${subgraphPort}`, '/subgraph');
      expect(apart.status).toBe(200);
      expect(JSON.parse(apart.body).data.companies.nodes).toHaveLength(1);
      expect((await post(gateway.origin, '/graphql')).status).toBe(200);
    } finally {
      await gateway.close();
    }
  });
});
