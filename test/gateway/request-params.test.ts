import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/start-stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack?.close());
beforeEach(() => stack.sandbox.reset());

const QUERY = encodeURIComponent(`{ companies(first: 1) { nodes { uuid } } }`);

async function send(url: string, init: RequestInit = {}) {
  const response = await fetch(url, {
    ...init,
    headers: { 'x-api-key': stack.sandbox.keys.demo, accept: 'application/json', ...init.headers },
  });
  return { status: response.status, body: await response.json() };
}

describe('malformed GraphQL parameters are HTTP 400 BAD_REQUEST, before any request', () => {
  it.each([
    ['GET variables', 'variables', `?query=${QUERY}&variables=notjson`],
    ['GET extensions', 'extensions', `?query=${QUERY}&extensions={bad`],
  ])('%s that are not JSON', async (_what, parameter, search) => {
    const { status, body } = await send(`${stack.url}${search}`);
    expect(status).toBe(400);
    expect(body.errors).toEqual([
      expect.objectContaining({
        message: expect.stringContaining(`The "${parameter}" parameter is not valid JSON`),
        extensions: { code: 'BAD_REQUEST' },
      }),
    ]);
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it('form-encoded POST variables that are not JSON', async () => {
    const { status, body } = await send(stack.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `query=${QUERY}&variables=%7Bnope`,
    });
    expect(status).toBe(400);
    expect(body.errors[0]).toMatchObject({
      message: expect.stringContaining(`The "variables" parameter is not valid JSON`),
      extensions: { code: 'BAD_REQUEST' },
    });
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  /** A GraphQL multipart request (as upload clients send it) with these form fields. */
  function multipart(fields: Record<string, string>): FormData {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    return form;
  }

  it.each([
    ['"operations" that is not JSON', { operations: 'junk{', map: '{}' }, '"operations"'],
    ['no "operations"', { map: '{}' }, '"operations"'],
    [
      '"map" that is not JSON',
      {
        operations: JSON.stringify({ query: `{ companies(first: 1) { nodes { uuid } } }` }),
        map: 'x',
      },
      '"map"',
    ],
  ])('a multipart POST with %s', async (_what, fields, named) => {
    const { status, body } = await send(stack.url, { method: 'POST', body: multipart(fields) });
    expect(status).toBe(400);
    expect(body.errors).toEqual([
      expect.objectContaining({
        message: expect.stringContaining(named),
        extensions: { code: 'BAD_REQUEST' },
      }),
    ]);
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it('a well-formed multipart POST still runs', async () => {
    const operations = JSON.stringify({ query: `{ companies(first: 1) { nodes { uuid } } }` });
    const { status, body } = await send(stack.url, {
      method: 'POST',
      body: multipart({ operations, map: '{}' }),
    });
    expect(status).toBe(200);
    expect(body.data.companies.nodes).toHaveLength(1);
  });

  it.each([
    ['a body that is not JSON', '{"query": "{ __typename }"'],
    ['variables that are a string', JSON.stringify({ query: '{ __typename }', variables: 'x' })],
    ['variables that are a list', JSON.stringify({ query: '{ __typename }', variables: [1] })],
    ['extensions that are a number', JSON.stringify({ query: '{ __typename }', extensions: 5 })],
  ])('POST with %s', async (_what, body) => {
    const response = await send(stack.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(response.status).toBe(400);
    expect(response.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it('GET with well-formed variables still runs', async () => {
    const variables = encodeURIComponent(JSON.stringify({ n: 2 }));
    const query = encodeURIComponent(`query ($n: Int) { companies(first: $n) { nodes { uuid } } }`);
    const { status, body } = await send(`${stack.url}?query=${query}&variables=${variables}`);
    expect(status).toBe(200);
    expect(body.data.companies.nodes).toHaveLength(2);
  });
});
