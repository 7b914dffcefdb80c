import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { SMALL_SIZES, startGateway, type Gateway } from '../helpers/start-stack.js';

const APP = 'https://app.example.com';
const ADMIN = 'http://localhost:3000';

let sandbox: Sandbox;
let listed: Gateway;
let open: Gateway;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
  listed = await startGateway(sandbox, { config: { corsOrigins: [APP, ADMIN] } });
  open = await startGateway(sandbox);
});
afterAll(async () => {
  await listed?.close();
  await open?.close();
  await sandbox?.close();
});

/** A browser's preflight before a POST with the headers a web app sends. */
function preflight(url: string, origin: string) {
  return fetch(url, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type,x-api-key,x-credit-budget,x-request-id',
    },
  });
}

describe('CORS_ORIGINS', () => {
  it('a listed origin passes the preflight, with the headers a web app sends', async () => {
    const response = await preflight(listed.url, ADMIN);
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(ADMIN);
    expect(response.headers.get('access-control-allow-methods')).toBe('POST');
    expect(response.headers.get('access-control-allow-headers')).toBe(
      'content-type,x-api-key,x-credit-budget,x-request-id',
    );
    expect(response.headers.get('access-control-max-age')).toBe('600');
    expect(sandbox.requestLog()).toHaveLength(0);
  });

  it('an origin not listed is not allowed', async () => {
    const response = await preflight(listed.url, 'https://evil.example.net');
    expect(response.headers.get('access-control-allow-origin')).not.toBe(
      'https://evil.example.net',
    );
    const post = await fetch(listed.url, {
      method: 'POST',
      headers: { origin: 'https://evil.example.net', 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(post.headers.get('access-control-allow-origin')).not.toBe('https://evil.example.net');
  });

  it('the actual response names the origin and exposes X-Request-Id, WWW-Authenticate, the credit and the quota headers', async () => {
    const response = await fetch(listed.url, {
      method: 'POST',
      headers: { origin: APP, 'content-type': 'application/json', 'x-api-key': 'demo-key' },
      body: JSON.stringify({ query: '{ companies(first: 1) { nodes { name } } }' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP);
    expect(response.headers.get('access-control-expose-headers')).toBe(
      'X-Request-Id, WWW-Authenticate, X-Credits-Used, X-Credits-Saved, X-Credits-Remaining, RateLimit-Policy, RateLimit, Retry-After',
    );
    expect(response.headers.get('x-credits-used')).toBe('1');
  });

  it('by default (*), any origin is allowed as *, without credentials', async () => {
    const response = await preflight(open.url, 'https://anything.example.org');
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    const post = await fetch(open.url, {
      method: 'POST',
      headers: {
        origin: 'https://anything.example.org',
        'content-type': 'application/json',
        'x-api-key': 'demo-key',
      },
      body: JSON.stringify({ query: '{ companies(first: 1) { nodes { name } } }' }),
    });
    expect(post.headers.get('access-control-allow-origin')).toBe('*');
    expect(post.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('a listed origin is never told it may send credentials', async () => {
    const response = await preflight(listed.url, APP);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP);
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  });
});
