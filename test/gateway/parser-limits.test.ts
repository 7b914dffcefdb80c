import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startStack, type Stack } from '../helpers/start-stack.js';
import { captureLog } from '../helpers/capture-log.js';

let stack: Stack;
const log = captureLog();
beforeAll(async () => {
  // MAX_DEPTH at its top, so that only the guard before parsing refuses (query-limits.test.ts
  // tests MAX_DEPTH and the token limit).
  stack = await startStack({ config: { maxDepth: 64 }, logger: log.logger });
});
afterAll(() => stack?.close());
beforeEach(() => stack.sandbox.reset());
afterEach(() => vi.restoreAllMocks());

/** `{ a { a { ... } } }`, `levels` selection sets deep. */
const nested = (levels: number) => `${'{ a '.repeat(levels)}${'} '.repeat(levels)}`;

/**
 * Records what the gateway writes to stderr (console.error and console.warn go there), and its
 * log lines above info (a stack overflow would be logged as an unexpected error).
 */
function watchStderr() {
  const written: unknown[] = [];
  log.lines.length = 0;
  vi.spyOn(console, 'error').mockImplementation((...args) => void written.push(args));
  vi.spyOn(console, 'warn').mockImplementation((...args) => void written.push(args));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    written.push(chunk);
    return true;
  });
  return () => [...written, ...log.lines.filter((line) => !['debug', 'info'].includes(line.level))];
}

describe('documents nested too deep are refused before parsing', () => {
  it('a selection 2,500 levels deep is HTTP 400 DOCUMENT_TOO_DEEP, with nothing on stderr', async () => {
    const stderr = watchStderr();
    const query = nested(2_500);
    expect(query.length).toBeGreaterThan(10_000);
    for (let i = 0; i < 2; i++) {
      const response = await stack.gql(query);
      expect(response.status).toBe(400);
      expect(response.errors).toEqual([
        expect.objectContaining({
          message: expect.stringMatching(/more than 64 levels.*nothing ran/is),
          extensions: { code: 'DOCUMENT_TOO_DEEP' },
        }),
      ]);
    }
    expect(stderr()).toEqual([]);
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it('a document of ~100 KB nested 16,000 levels deep, by GET too', async () => {
    const stderr = watchStderr();
    const query = nested(16_000);
    expect(query.length).toBeGreaterThan(90_000);
    const response = await stack.gql(query);
    expect(response.errors![0]!.extensions!.code).toBe('DOCUMENT_TOO_DEEP');
    const get = await fetch(`${stack.url}?query=${encodeURIComponent(nested(200))}`, {
      headers: { accept: 'application/graphql-response+json' },
    });
    expect(get.status).toBe(400);
    expect((await get.json()).errors[0].extensions.code).toBe('DOCUMENT_TOO_DEEP');
    expect(stderr()).toEqual([]);
  });

  it('lists and arguments count as nesting too', async () => {
    const deepList = `{ companies(first: 1, industryGroup: ${'['.repeat(100)}"x"${']'.repeat(100)}) { nodes { uuid } } }`;
    const response = await stack.gql(deepList);
    expect(response.errors![0]!.extensions!.code).toBe('DOCUMENT_TOO_DEEP');
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it('braces in strings, block strings and comments do not count', async () => {
    const braces = '{'.repeat(200);
    const response = await stack.gql(`# ${braces}
      {
        a: __type(name: "${braces} \\" ${braces}") { name }
        b: __type(name: """${braces} \\""" ${braces}""") { name }
      }`);
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({ a: null, b: null });
  });

  it('a Relay query six connections deep (23 levels) runs when MAX_DEPTH allows it', async () => {
    const hop = (field: string, inner: string) =>
      `${field}(first: 1) { edges { cursor node { id ${inner} } } pageInfo { hasNextPage } }`;
    const query = `{ ${hop(
      'companies',
      hop(
        'fundingEvents',
        `company { ${hop(
          'execMoves',
          `person { ${hop('execMoves', `company { ${hop('acquisitions', `target { ${hop('fundingEvents', 'round')} }`)} }`)} }`,
        )} }`,
      ),
    )} }`;
    const response = await stack.gql(query);
    expect(response.status).toBe(200);
    expect(response.errors).toBeUndefined();
    expect(response.data.companies.edges).toHaveLength(1);
  });
});
