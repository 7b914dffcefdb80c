import { describe, expect, it } from 'vitest';
import { Admission } from '../../src/admission/admission.js';
import { defaultConfig, type Config } from '../../src/config.js';
import { schema, subgraphSchema } from '../../src/schema/index.js';

const versionOf = (config: Partial<Config>, graph = schema) =>
  new Admission({
    config: { ...defaultConfig, ...config },
    authenticate: () => ({ principal: null, upstreamKey: null, validUntil: Infinity }),
    schema: graph,
  }).version;

describe('Admission.version: what names a kept answer', () => {
  const base = versionOf({});

  it('is the same for the same schema and settings', () => {
    expect(versionOf({})).toBe(base);
    // Settings that do not decide whether a request may run leave it alone.
    expect(versionOf({ port: 1234, logLevel: 'warn', pollIntervalSeconds: 5 })).toBe(base);
  });

  it.each<[string, Partial<Config>]>([
    ['TRUSTED_DOCUMENTS', { trustedDocuments: new Map([['id', '{ __typename }']]) }],
    ['AUTH_MODE', { authMode: 'jwt', jwtIssuer: 'i', jwtAudience: 'a' }],
    ['MAX_DEPTH', { maxDepth: 4 }],
    ['MAX_ALIASES', { maxAliases: 3 }],
    ['MAX_TOKENS', { maxTokens: 1_000 }],
    ['MAX_DIRECTIVES', { maxDirectives: 2 }],
    ['MAX_REQUEST_BYTES', { maxRequestBytes: 5_000 }],
    ['MAX_RESPONSE_RECORDS', { maxResponseRecords: 5 }],
    ['MAX_UPSTREAM_REQUESTS', { maxUpstreamRequests: 5 }],
    ['CREDIT_BUDGET_DEFAULT', { creditBudgetDefault: 5 }],
  ])('changes with %s', (_name, config) => {
    expect(versionOf(config)).not.toBe(base);
  });

  it('changes with the schema', () => {
    expect(versionOf({}, subgraphSchema)).not.toBe(base);
  });
});
