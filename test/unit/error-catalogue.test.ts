import { readdirSync, readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { describe, expect, it } from 'vitest';
import { pathOf, tableIn } from '../../scripts/doc-table.js';
import { errorTable, renderErrorTable } from '../../scripts/error-table.js';
import { fromUpstreamError, gatewayError } from '../../src/errors.js';
import { UpstreamError } from '../../src/upstream/upstream-error.js';
import {
  errorCatalogue,
  ErrorCode,
  isServiceCode,
  type ErrorEntry,
} from '../../src/errors/error-catalogue.js';

const entries = Object.entries(errorCatalogue) as [ErrorCode, ErrorEntry][];

/**
 * The codes a source text names: `ErrorCode.X`, and string literals compared with or assigned to
 * a `code` (`code: 'X'`, `error.code === 'X'`).
 */
function codesIn(text: string): string[] {
  const patterns = [
    /\bErrorCode\.([A-Z][A-Z0-9_]*)/g,
    /\bcode:\s*'([A-Z][A-Z0-9_]*)'/g,
    /\bcode\s*[!=]==?\s*'([A-Z][A-Z0-9_]*)'/g,
  ];
  return patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((match) => match[1]!));
}

/** Every code named in the gateway's sources, with the files naming it (the sandbox is the service's world). */
function codesInSources(): Map<string, string[]> {
  const root = new URL('../../src/', import.meta.url);
  const found = new Map<string, string[]>();
  for (const file of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts') || file.startsWith('sandbox')) continue;
    for (const code of codesIn(readFileSync(new URL(file, root), 'utf8'))) {
      found.set(code, [...(found.get(code) ?? []), file]);
    }
  }
  return found;
}

describe('the error catalogue', () => {
  it('holds every code the gateway names in src/', () => {
    const found = codesInSources();
    // The scan finds what it is meant to: literals of the upstream policies, ErrorCode in plugins.
    expect(found.get('UNAUTHORIZED')).toContain('upstream/policies/require-key.ts');
    expect(found.get('CREDIT_BUDGET_EXCEEDED')).toContain('credits/budget-rules.ts');
    const unknown = [...found].filter(([code]) => !(code in errorCatalogue));
    expect(Object.fromEntries(unknown)).toEqual({});
  });

  it('finds codes written either way', () => {
    expect(
      codesIn(
        `code: 'A_B', x.code === 'C', code !== 'D', ErrorCode.E_1, code : 'NOT', code: 'lower'`,
      ),
    ).toEqual(['E_1', 'A_B', 'C', 'D']);
  });

  it.each(entries.filter(([, entry]) => entry.http))(
    'gives %s an HTTP error status',
    (_, entry) => {
      const { status } = entry.http!;
      expect(Number.isInteger(status) && status >= 400 && status <= 599).toBe(true);
      expect(STATUS_CODES[status]).toBeDefined();
    },
  );

  it('says of every code when it happens, who raises it and whether to retry', () => {
    for (const [code, entry] of entries) {
      expect(entry.when.trim(), code).not.toBe('');
      expect(entry.when, code).not.toMatch(/\|/);
      expect(entry.raisedBy.length, code).toBeGreaterThan(0);
      expect(typeof entry.retryable, code).toBe('boolean');
    }
  });

  it("names the service's five codes (spec section 7) and no other", () => {
    const service = Object.keys(errorCatalogue).filter(isServiceCode);
    expect(service).toEqual([
      'INVALID_INPUT',
      'UNAUTHORIZED',
      'PAYMENT_REQUIRED',
      'FORBIDDEN',
      'TOO_MANY_REQUESTS',
    ]);
    expect(isServiceCode('UPSTREAM_UNAVAILABLE')).toBe(false);
  });

  it('is what ErrorCode lists', () => {
    expect(Object.keys(ErrorCode)).toEqual(Object.keys(errorCatalogue));
    for (const [code, value] of Object.entries(ErrorCode)) expect(value).toBe(code);
  });
});

describe('gatewayError', () => {
  it("answers with the catalogue's status, in a copy of its own", () => {
    const first = gatewayError(ErrorCode.REQUEST_ENTITY_TOO_LARGE, 'too large');
    const second = gatewayError(ErrorCode.REQUEST_ENTITY_TOO_LARGE, 'too large');
    expect(first.extensions).toEqual({
      code: 'REQUEST_ENTITY_TOO_LARGE',
      http: { status: 413 },
    });
    // Yoga writes to an error's `http`: it must not reach the catalogue, nor another error.
    expect(first.extensions['http']).not.toBe(second.extensions['http']);
    expect(first.extensions['http']).not.toBe(errorCatalogue.REQUEST_ENTITY_TOO_LARGE.http);
  });

  it("answers the gateway's FORBIDDEN 403, and passes the service's on as a field's error, in a 200", () => {
    expect(gatewayError(ErrorCode.FORBIDDEN, 'no key').extensions).toEqual({
      code: 'FORBIDDEN',
      http: { status: 403 },
    });
    const service = new UpstreamError('blocked', {
      code: 'FORBIDDEN',
      failure: 'status',
      status: 403,
      requestId: 'req_1',
    });
    expect(fromUpstreamError(service).extensions).toEqual({
      code: 'FORBIDDEN',
      requestId: 'req_1',
      upstreamStatus: 403,
    });
  });

  it('sets no status where the catalogue gives none: the error sits in a 200', () => {
    expect(
      gatewayError(ErrorCode.CREDIT_BUDGET_EXCEEDED, 'over', { estimate: 5 }).extensions,
    ).toEqual({ code: 'CREDIT_BUDGET_EXCEEDED', estimate: 5 });
  });
});

describe("docs/clients.md's error table", () => {
  it('is the table rendered from the catalogue (run `npm run errors:table` after a change)', async () => {
    const page = readFileSync(pathOf(errorTable), 'utf8');
    expect(tableIn(page, errorTable)).toBe(await renderErrorTable());
  });

  it('takes no link from a `when`: the generator links each `see` title', () => {
    for (const [code, entry] of Object.entries(errorCatalogue)) {
      expect((entry as ErrorEntry).when, code).not.toMatch(/\]\(/);
    }
  });
});
