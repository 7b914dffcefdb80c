import { parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config.js';
import { createEstimator } from '../../src/estimate/estimate-operation.js';
import { schema } from '../../src/schema/index.js';

// The estimate counts what `@defer` and `@stream` deliver later as it counts the rest: the budget
// and the quota are decided before an operation runs, whatever part of it arrives in a later payload.

const estimate = createEstimator(schema, {
  defaultPageSize: defaultConfig.defaultPageSize,
  maxPageSize: defaultConfig.maxPageSize,
  secret: defaultConfig.cursorSecret,
});

/** The estimate of a document, checked valid against the gateway's schema first. */
function estimateOf(query: string, variables: Record<string, unknown> = {}) {
  const document = parse(query);
  expect(validate(schema, document)).toEqual([]);
  return estimate(document, undefined, variables);
}

const PLAIN = `{ fundingEvents(first: 5) { edges { node { round
  company { name execMoves(first: 2) { nodes { role } } }
  investors { name type } } } } }`;

describe('the estimate of an operation with @defer or @stream', () => {
  it('counts a deferred inline fragment as the fields it holds', () => {
    const deferred = `{ fundingEvents(first: 5) { edges { node { round
      ... @defer(label: "company") { company { name execMoves(first: 2) { nodes { role } } } }
      investors { name ... @defer { type } } } } } }`;
    expect(estimateOf(deferred)).toEqual(estimateOf(PLAIN));
    expect(estimateOf(PLAIN).credits).toBeGreaterThan(5);
  });

  it('counts a deferred fragment spread as the fields it holds', () => {
    const spread = `query { fundingEvents(first: 5) { edges { node { round ...Later @defer } } } }
      fragment Later on FundingEvent {
        company { name execMoves(first: 2) { nodes { role } } }
        investors { name type } }`;
    expect(estimateOf(spread)).toEqual(estimateOf(PLAIN));
  });

  it('counts every item of a streamed list, whatever its initialCount', () => {
    const streamed = `{ fundingEvents(first: 5) { edges @stream(initialCount: 1) { node { round
      company { name execMoves(first: 2) { nodes @stream { role } } }
      investors @stream(initialCount: 0) { name type } } } } }`;
    expect(estimateOf(streamed)).toEqual(estimateOf(PLAIN));
  });

  it('counts a part deferred under a condition unless @skip or @include leaves it out', () => {
    const conditional = `query ($later: Boolean!) { fundingEvents(first: 5) { edges { node { round
      ... @defer(if: $later) { company { name execMoves(first: 2) { nodes { role } } } }
      ... @include(if: $later) { investors { name type } } } } } }`;
    expect(estimateOf(conditional, { later: true })).toEqual(estimateOf(PLAIN));
    expect(estimateOf(conditional, { later: false }).credits).toBeLessThan(
      estimateOf(PLAIN).credits,
    );
  });
});
