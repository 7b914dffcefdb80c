import { request } from 'node:http';
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
});
