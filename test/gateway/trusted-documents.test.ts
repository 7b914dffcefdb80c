import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import {
  NO_CACHE,
  startGateway,
  startStack,
  type Gateway,
  type Stack,
} from '../helpers/start-stack.js';

const hash = (algorithm: 'sha256' | 'md5', text: string) =>
  createHash(algorithm).update(text, 'utf8').digest('hex');

const COMPANIES = `query Companies($n: Int) { companies(first: $n) { nodes { uuid name } } }`;
const ROUNDS = `query Rounds { fundingEvents(first: 3) { nodes { uuid round company { name } } } }`;
const NOT_LISTED = `{ investors(first: 2) { nodes { uuid } } }`;
/** Apollo Client's id (a SHA-256) for one, Relay's (an MD5, its compiler's default) for the other. */
const COMPANIES_ID = hash('sha256', COMPANIES);
const ROUNDS_ID = hash('md5', ROUNDS);

const dir = mkdtempSync(join(tmpdir(), 'trusted-documents-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `content` to a file of the test's directory; returns its path. */
function file(name: string, content: string) {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

let stack: Stack;
/** A second gateway on the same sandbox, without trusted documents: the same queries as text. */
let open: Gateway;
beforeAll(async () => {
  const path = file(
    'persisted-queries.json',
    JSON.stringify({ [COMPANIES_ID]: COMPANIES, [ROUNDS_ID]: ROUNDS }),
  );
  const { trustedDocuments } = loadConfig({ TRUSTED_DOCUMENTS: path });
  stack = await startStack({ config: { trustedDocuments } });
  open = await startGateway(stack.sandbox, { headers: NO_CACHE });
});
afterAll(async () => {
  await open?.close();
  await stack?.close();
});
beforeEach(() => stack.sandbox.reset());

const JSON_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/graphql-response+json,application/json;q=0.9',
  'x-api-key': 'demo-key',
  // Compares upstream requests and credits: every operation asks for fresh pages.
  ...NO_CACHE,
};

async function send(url: string, init: RequestInit = {}) {
  const response = await fetch(url, { ...init, headers: { ...JSON_HEADERS, ...init.headers } });
  return { status: response.status, body: await response.json() };
}

const post = (body: unknown, headers: Record<string, string> = {}) =>
  send(stack.url, { method: 'POST', body: JSON.stringify(body), headers });

const apq = (sha256Hash: string) => ({ persistedQuery: { version: 1, sha256Hash } });

describe('TRUSTED_DOCUMENTS: the listed operations run by their id', () => {
  const n2 = encodeURIComponent('{"n":2}');
  it.each([
    [
      "Apollo Client's persisted query, POST",
      () =>
        post({ operationName: 'Companies', variables: { n: 2 }, extensions: apq(COMPANIES_ID) }),
      COMPANIES,
      { n: 2 },
    ],
    [
      "Apollo Client's persisted query, GET (useGETForHashedQueries)",
      () =>
        send(
          `${stack.url}?operationName=Companies&variables=${n2}&extensions=${encodeURIComponent(JSON.stringify(apq(COMPANIES_ID)))}`,
        ),
      COMPANIES,
      { n: 2 },
    ],
    [
      'the GraphQL-over-HTTP documentId, GET, with its sha256: prefix',
      () => send(`${stack.url}?documentId=sha256:${COMPANIES_ID}&variables=${n2}`),
      COMPANIES,
      { n: 2 },
    ],
    ["Relay's doc_id (an MD5 id), POST", () => post({ doc_id: ROUNDS_ID }), ROUNDS, {}],
  ])(
    '%s: the data, credits and upstream requests of its text',
    async (_how, request, query, variables) => {
      const persisted = await request();
      const spent = stack.sandbox.requestLog().map((entry) => [entry.path, entry.records]);
      stack.sandbox.reset();
      const text = await open.gql(query, variables);

      expect(persisted.status).toBe(200);
      expect(persisted.body.errors).toBeUndefined();
      expect(Object.values(persisted.body.data)[0]).toMatchObject({ nodes: expect.any(Array) });
      expect(persisted.body.data).toEqual(text.data);
      expect(persisted.body.extensions.credits.used).toBe(text.extensions!.credits.used);
      expect(spent).toEqual(stack.sandbox.requestLog().map((entry) => [entry.path, entry.records]));
      expect(spent.length).toBeGreaterThan(0);
    },
  );

  it('a listed operation keeps its budget: over it, it is refused before it spends', async () => {
    const refused = await post(
      { variables: { n: 50 }, extensions: apq(COMPANIES_ID) },
      { 'x-credit-budget': '10' },
    );
    expect(refused.body.errors[0].extensions).toMatchObject({
      code: 'CREDIT_BUDGET_EXCEEDED',
      estimate: 50,
      budget: 10,
    });
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });
});

describe('TRUSTED_DOCUMENTS: anything else is refused, before any upstream request', () => {
  const onlyIds = expect.stringContaining('runs only its trusted documents (TRUSTED_DOCUMENTS)');

  it.each([
    ['a query that is not listed', { query: NOT_LISTED }],
    ['the text of a listed query', { query: COMPANIES, variables: { n: 2 } }],
    ['no query and no id', { variables: {} }],
  ])('%s: PERSISTED_QUERY_ID_REQUIRED', async (_what, body) => {
    const refused = await post(body);
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([
      { message: onlyIds, extensions: { code: 'PERSISTED_QUERY_ID_REQUIRED' } },
    ]);
    expect(refused.body.data).toBeUndefined();
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it('an id that is not listed: PERSISTED_QUERY_NOT_IN_LIST, by POST and by GET', async () => {
    const unknown = hash('sha256', NOT_LISTED);
    const byPost = await post({ extensions: apq(unknown) });
    const byGet = await send(
      `${stack.url}?extensions=${encodeURIComponent(JSON.stringify(apq(unknown)))}`,
    );
    const byDocId = await post({ doc_id: 'not-a-listed-id' });
    for (const refused of [byPost, byGet, byDocId]) {
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toEqual([
        {
          message: expect.stringContaining(
            'not in the trusted documents of this gateway (TRUSTED_DOCUMENTS)',
          ),
          extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST' },
        },
      ]);
    }
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it("APQ registration (Apollo Client's retry: query and its hash) adds nothing", async () => {
    const sha256Hash = hash('sha256', NOT_LISTED);
    const registration = await post({ query: NOT_LISTED, extensions: apq(sha256Hash) });
    expect(registration.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_ID_REQUIRED');
    const after = await post({ extensions: apq(sha256Hash) });
    expect(after.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it('/subgraph is no way around the list: it runs only the listed operations too', async () => {
    const subgraph = stack.url.replace(/\/graphql$/, '/subgraph');
    const refused = await send(subgraph, {
      method: 'POST',
      body: JSON.stringify({ query: NOT_LISTED }),
    });
    expect(refused.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_ID_REQUIRED');
    const listed = await send(subgraph, {
      method: 'POST',
      body: JSON.stringify({ variables: { n: 1 }, extensions: apq(COMPANIES_ID) }),
    });
    expect(listed.body.data.companies.nodes).toHaveLength(1);
    expect(stack.sandbox.requestLog()).toHaveLength(1);
  });

  it('under Accept: application/json alone the refusal is HTTP 200, as the GraphQL-over-HTTP spec asks', async () => {
    const refused = await post({ query: NOT_LISTED }, { accept: 'application/json' });
    expect(refused.status).toBe(200);
    expect(refused.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_ID_REQUIRED');
  });
});

describe('TRUSTED_DOCUMENTS: a bad file stops the gateway at boot', () => {
  it.each([
    [
      'a missing file',
      join(dir, 'missing.json'),
      `must name a readable JSON file (cannot read "${join(dir, 'missing.json')}": ENOENT: no such file or directory)`,
    ],
    ['text that is not JSON', file('broken.json', '{"a": '), 'is not JSON'],
    ['a list', file('list.json', '["query { __typename }"]'), 'holds an array'],
    ['a value that is not a string', file('number.json', '{"a": 1}'), 'holds a number at "a"'],
    [
      'an Apollo manifest',
      file('manifest.json', '{"operations": []}'),
      'holds an array at "operations"',
    ],
    ['an empty document', file('blank.json', '{"a": " "}'), 'holds an empty string at "a"'],
    ['no documents', file('empty.json', '{}'), 'lists at least one document'],
    [
      'a document that does not parse',
      file('unparsable.json', '{"abc": "query { companies( }"}'),
      'the document "abc" does not parse at line 1, column 20: Syntax Error',
    ],
  ])('%s: loadConfig names the setting and what is wrong', (_what, path, rule) => {
    let message = '';
    try {
      loadConfig({ TRUSTED_DOCUMENTS: path });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^TRUSTED_DOCUMENTS must /);
    expect(message).toContain(rule);
  });

  it('the process exits 1 with that message, before it listens', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, TRUSTED_DOCUMENTS: join(dir, 'missing.json'), PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(stderr).toContain(
      `TRUSTED_DOCUMENTS must name a readable JSON file (cannot read "${join(dir, 'missing.json')}": ENOENT: no such file or directory)`,
    );
  });
});
