import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/start-stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ config: { maxRequestBytes: 2_000 } });
});
afterAll(() => stack?.close());

/** POSTs `body` in chunks, without a Content-Length (Transfer-Encoding: chunked). */
function postChunked(body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      stack.url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'demo-key' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    for (let i = 0; i < body.length; i += 500) req.write(body.slice(i, i + 500));
    req.end();
  });
}

/**
 * Sends `first` on a new raw connection and reads its response, then sends `second` on the same
 * connection. Resolves with the first response and what followed: the second response's status
 * line, or 'closed' when the server closed the connection. Rejects when neither happens in
 * `timeoutMs`: a client waiting on a connection that will never answer.
 */
function twoOnOneConnection(
  first: string,
  second: string,
  timeoutMs = 2_000,
): Promise<{ first: string; then: string }> {
  const { hostname, port } = new URL(stack.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    let firstResponse: string | undefined;
    const finish = (then: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ first: firstResponse ?? received, then });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer in ${timeoutMs} ms and the connection is still open`));
    }, timeoutMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (firstResponse === undefined) {
        const headEnd = received.indexOf('\r\n\r\n');
        const length = /\r\ncontent-length: *(\d+)/i.exec(received.slice(0, headEnd));
        if (headEnd < 0 || !length || received.length < headEnd + 4 + Number(length[1])) return;
        firstResponse = received.slice(0, headEnd + 4 + Number(length[1]));
        received = received.slice(firstResponse.length);
        socket.write(second, () => {});
      }
      if (firstResponse !== undefined && received.includes('\r\n')) {
        finish(received.slice(0, received.indexOf('\r\n')));
      }
    });
    socket.on('close', () => finish('closed'));
    socket.on('error', () => {});
    socket.write(first);
  });
}

const GET_TYPENAME = `GET /graphql?query=%7B__typename%7D HTTP/1.1\r\nHost: gateway\r\nAccept: application/json\r\n\r\n`;

const query = (padding: number) =>
  JSON.stringify({ query: `{ companies(first: 1) { nodes { uuid } } }${' '.repeat(padding)}` });

describe('request body limit', () => {
  it('answers 413 to a body above MAX_REQUEST_BYTES, before any upstream request', async () => {
    stack.sandbox.reset();
    const response = await fetch(stack.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'demo-key' },
      body: query(3_000),
    });
    expect(response.status).toBe(413);
    const body = await response.json();
    expect(body.errors[0].extensions.code).toBe('REQUEST_ENTITY_TOO_LARGE');
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it('counts a chunked body as it reads it', async () => {
    const small = await postChunked(query(1_000));
    expect(small.status).toBe(200);
    expect(JSON.parse(small.body).data.companies.nodes).toHaveLength(1);
    const large = await postChunked(query(5_000));
    expect(large.status).toBe(413);
    expect(JSON.parse(large.body).errors[0].extensions.code).toBe('REQUEST_ENTITY_TOO_LARGE');
  });

  it('a chunked body above the limit closes the connection after the 413', async () => {
    // The 413 comes while the client is still sending: the rest of the body follows it, and then
    // a second request on the same connection.
    const body = query(5_000);
    let chunks = '';
    for (let i = 0; i < body.length; i += 1_000) {
      const chunk = body.slice(i, i + 1_000);
      chunks += `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
    }
    const { first, then } = await twoOnOneConnection(
      `POST /graphql HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}`,
      `a\r\n${' '.repeat(10)}\r\n0\r\n\r\n${GET_TYPENAME}`,
    );
    expect(then).toBe('closed');
    expect(first).toMatch(/^HTTP\/1\.1 413 /);
    expect(first).toMatch(/\r\nconnection: close\r\n/i);
  });

  it('a body above the limit with a Content-Length does not leave the connection hanging', async () => {
    const body = query(5_000);
    const { first, then } = await twoOnOneConnection(
      `POST /graphql HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 3_000)}`,
      `${body.slice(3_000)}${GET_TYPENAME}`,
    );
    expect(first).toMatch(/^HTTP\/1\.1 413 /);
    expect(then).toMatch(/^(closed|HTTP\/1\.1 200 )/);
  });

  it('a client still sending a 5 MB body reads the 413, not a reset, and may send again', async () => {
    // 80 writes of 64 KB, 2 ms apart: the 413 comes while most of the body is still to be sent.
    const socket = connect(Number(new URL(stack.url).port), '127.0.0.1');
    const size = 80 * 65_536;
    let received = '';
    let failure: string | null = null;
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    socket.on('error', (error: NodeJS.ErrnoException) => (failure = error.code ?? error.message));
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /graphql HTTP/1.1\r\nHost: g\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`,
    );
    const chunk = Buffer.alloc(65_536, 0x20);
    for (let sent = 0; sent < size && !failure; sent += chunk.length) {
      socket.write(chunk);
      await sleep(2);
    }
    // The body is read off to its end: the same connection answers the next request.
    socket.write(GET_TYPENAME);
    for (
      let waited = 0;
      !/HTTP\/1\.1 200/.test(received) && !failure && waited < 3_000;
      waited += 20
    ) {
      await sleep(20);
    }
    socket.destroy();
    expect(failure).toBeNull();
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received).toMatch(/HTTP\/1\.1 200 /);
  });
});
