import { request, type Agent, type ClientRequest } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config.js';
import { DRAIN_MAX_BYTES } from '../../src/plugins/use-request-body-limit.js';
import { startStack, type Stack } from '../helpers/start-stack.js';

// The defaults as shipped: MAX_REQUEST_BYTES 1,000,000, REQUEST_TIMEOUT_MS 30 s.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack?.close());

const BODY_BYTES = 5_000_000;
const CHUNK = Buffer.alloc(64 * 1024, 0x20);
/** How long a client waits for its whole exchange before it gives up (it takes well under 1 s). */
const CLIENT_BOUND_MS = 10_000;

/** What one client saw: the status and body it read, and the error its request raised, if any. */
interface Seen {
  status: number | null;
  body: string;
  error: string | null;
}

/** Resolves once `req` may be written to again, or can no longer be. */
function drained(req: ClientRequest): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      req.off('drain', done);
      req.off('close', done);
      resolve();
    };
    req.on('drain', done);
    req.on('close', done);
  });
}

/**
 * POSTs a body of {@link BODY_BYTES} with its `Content-Length` as a `node:http` client does: 64 KB
 * writes, each once the previous one drained, `pauseMs` apart. It goes on sending after an answer
 * came, and stops at an error. `agent: false` sends `Connection: close`; the default agent keeps
 * the connection alive.
 */
function postInChunks(pauseMs: number, agent: Agent | false | undefined): Promise<Seen> {
  return new Promise((resolve) => {
    const seen: Seen = { status: null, body: '', error: null };
    let answered = false;
    let sent = false;
    const finish = () => {
      clearTimeout(bound);
      resolve(seen);
    };
    const settle = () => {
      if ((answered && sent) || seen.error) finish();
    };
    const req = request(
      stack.url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': String(BODY_BYTES),
          'x-api-key': 'demo-key',
        },
      },
      (res) => {
        seen.status = res.statusCode ?? null;
        res.setEncoding('utf8');
        res.on('data', (text: string) => (seen.body += text));
        res.on('end', () => {
          answered = true;
          settle();
        });
      },
    );
    const bound = setTimeout(() => {
      seen.error ??= `no whole exchange in ${CLIENT_BOUND_MS} ms`;
      req.destroy();
      finish();
    }, CLIENT_BOUND_MS);
    req.on('error', (error: NodeJS.ErrnoException) => {
      seen.error ??= error.code ?? error.message;
      settle();
    });
    void (async () => {
      for (let left = BODY_BYTES; left > 0 && !seen.error && !req.destroyed; left -= CHUNK.length) {
        if (!req.write(left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left))) await drained(req);
        if (pauseMs > 0) await sleep(pauseMs);
      }
      if (!req.destroyed) req.end();
      sent = true;
      settle();
    })();
  });
}

const TOO_LARGE = {
  status: 413,
  body: expect.stringContaining('"code":"REQUEST_ENTITY_TOO_LARGE"') as unknown as string,
  error: null,
};

describe('a body above MAX_REQUEST_BYTES sent in chunks with its Content-Length', () => {
  it('is above MAX_REQUEST_BYTES and within the bound a refused body is read off to', () => {
    expect(BODY_BYTES).toBeGreaterThan(defaultConfig.maxRequestBytes);
    expect(BODY_BYTES).toBeLessThanOrEqual(DRAIN_MAX_BYTES);
  });

  it.each([
    ['as fast as the socket drains, kept alive', 0, undefined],
    ['2 ms between writes, kept alive', 2, undefined],
    ['as fast as the socket drains, Connection: close', 0, false as const],
    ['2 ms between writes, Connection: close', 2, false as const],
  ])('four clients at once (%s) each read the 413, none a reset', async (_, pauseMs, agent) => {
    const seen = await Promise.all(Array.from({ length: 4 }, () => postInChunks(pauseMs, agent)));
    expect(seen).toEqual([TOO_LARGE, TOO_LARGE, TOO_LARGE, TOO_LARGE]);
    expect(JSON.parse(seen[0]!.body).errors[0].extensions.code).toBe('REQUEST_ENTITY_TOO_LARGE');
  });
});

describe('a body declared above the bound a refused body is read off to', () => {
  it('is answered 413 at once, with Connection: close, and the connection closed', async () => {
    const socket = connect(Number(new URL(stack.url).port), '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (text: string) => (received += text));
    socket.on('error', () => {});
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(
      `POST /graphql HTTP/1.1\r\nHost: g\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${DRAIN_MAX_BYTES + 1}\r\n\r\n`,
    );
    // The rest of the body is never sent: only an answer that does not wait for it comes.
    socket.write(CHUNK);
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received).toMatch(/\r\nconnection: close\r\n/i);
    expect(received).toContain('"code":"REQUEST_ENTITY_TOO_LARGE"');
  });
});
