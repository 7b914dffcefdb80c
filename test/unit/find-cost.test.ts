import { describe, expect, it } from 'vitest';
import {
  COMPANY_BY_DOMAIN_COST,
  findCompanyByDomain,
  companyNode,
} from '../../src/nodes/company-node.js';
import {
  findInvestorByDomain,
  INVESTOR_BY_DOMAIN_COST,
  INVESTOR_NAME_RANK_ASSUMED,
  investorNode,
} from '../../src/nodes/investor-node.js';
import { LIST_RANK_ASSUMED, lookupCredits } from '../../src/nodes/lookup-cost.js';
import { NODE_TYPE_LIST } from '../../src/nodes/node-types.js';

const nodeTypes = Object.fromEntries(NODE_TYPE_LIST.map((node) => [node.typename, node]));
import type { NodeId } from '../../src/nodes/node-type.js';
import { createUpstream } from '../../src/upstream/create-upstream.js';
import type { UpstreamRecord } from '../../src/upstream/types.js';
import { UpstreamSession } from '../../src/upstream/upstream-session.js';
import { envelope, mockService, SERVICE } from '../helpers/mock-service.js';

const UUID = '0b6f1c2e-1234-4a5b-8c9d-000000000001';
const OTHER = '0b6f1c2e-1234-4a5b-8c9d-000000000002';

/** The record sought, in the shape every lookup's `pick` reads (an event naming it, or itself). */
const SOUGHT = {
  id: UUID,
  company: { id: UUID },
  person: { id: UUID },
  acquirer: { id: UUID },
} as unknown as UpstreamRecord;

/**
 * A stand-in service whose every list holds other records only, except the sought one at `rank`
 * (1-based; absent when null), and goes on for `length` records (forever by default). Each page
 * is charged its records. `budget`, when given, is the operation's budget, kept by the gateway's
 * own budget policy.
 */
function standIn({
  rank = null as number | null,
  length = Infinity,
  budget,
}: { rank?: number | null; length?: number; budget?: number } = {}) {
  const service = mockService();
  let charged = 0;
  service.pool
    .intercept({ path: () => true })
    .reply(200, ({ path }) => {
      const query = new URL(path, SERVICE).searchParams;
      const start = Number(query.get('cursor') ?? 0);
      const end = Math.min(start + Number(query.get('limit')), length);
      const data = Array.from({ length: end - start }, (_, i) =>
        start + i + 1 === rank ? SOUGHT : { id: `other-${start + i}` },
      );
      charged += data.length;
      return envelope(data, { nextCursor: end < length ? String(end) : null });
    })
    .persist();
  const upstream = createUpstream({
    baseUrl: SERVICE,
    timeoutMs: 5_000,
    dispatcher: service.agent,
  });
  const session = new UpstreamSession(upstream.shared, { apiKey: 'key', concurrency: 4 });
  if (budget !== undefined) session.budget.set(budget, 0);
  return { session, charged: () => charged, requests: () => service.sent().length };
}

const hinted: Record<string, NodeId<string>> = {
  Company: { uuid: UUID, domain: 'acme.com' },
  Investor: { uuid: UUID, name: 'Acme Ventures' },
  Person: { uuid: UUID },
  ExecMove: { uuid: UUID, personId: OTHER, discoveredAt: '2025-01-01T00:00:00.000Z' },
  Acquisition: { uuid: UUID, companyId: OTHER, discoveredAt: '2025-01-01T00:00:00.000Z' },
  FundingEvent: {
    uuid: UUID,
    companyId: OTHER,
    discoveredAt: '2025-01-01T00:00:00.000Z',
    round: 'seed',
  },
};

/** The rank each node type's estimate assumes for a lookup with every hint. */
const assumedRank: Record<string, number> = {
  Company: LIST_RANK_ASSUMED,
  Investor: INVESTOR_NAME_RANK_ASSUMED,
  Person: 1,
  ExecMove: LIST_RANK_ASSUMED,
  Acquisition: LIST_RANK_ASSUMED,
  FundingEvent: LIST_RANK_ASSUMED,
};

const withWorstCost = (worst: 'bounded' | 'unbounded') =>
  Object.entries(nodeTypes).filter(
    ([typename, node]) =>
      (node.findCost(hinted[typename]!).worstCost === null) === (worst === 'unbounded'),
  );

describe("each node type's findCost is what its find spends", () => {
  it.each(Object.entries(nodeTypes))(
    '%s, with every hint: the assumed cost, for the record at its assumed rank',
    async (typename, node) => {
      const { session, charged } = standIn({ rank: assumedRank[typename]! });
      expect(await node.find(session, hinted[typename]!)).toMatchObject({ id: UUID });
      expect(charged()).toBe(node.findCost(hinted[typename]!).assumedCost);
      expect(charged()).toBeGreaterThan(0);
    },
  );

  it.each(withWorstCost('bounded'))(
    '%s, with every hint: the worst cost, where the record is nowhere',
    async (typename, node) => {
      const { session, charged } = standIn();
      expect(await node.find(session, hinted[typename]!)).toBeNull();
      expect(charged()).toBe(node.findCost(hinted[typename]!).worstCost);
    },
  );

  it.each(Object.entries(nodeTypes))('%s, from a bare UUID', async (_typename, node) => {
    const { session, charged } = standIn();
    expect(await node.find(session, { uuid: UUID })).toBeNull();
    const cost = node.findCost({ uuid: UUID });
    expect(cost.worstCost).not.toBeNull();
    expect(charged()).toBe(cost.worstCost);
  });

  it('names the costs docs/costs.md gives', () => {
    expect(companyNode.findCost(hinted.Company!)).toEqual({ assumedCost: 1, worstCost: null });
    expect(companyNode.findCost({ uuid: UUID })).toEqual({ assumedCost: 1, worstCost: 3 });
    expect(investorNode.findCost(hinted.Investor!)).toEqual({ assumedCost: 1, worstCost: null });
    expect(investorNode.findCost({ uuid: UUID })).toEqual({ assumedCost: 0, worstCost: 0 });
    for (const typename of ['FundingEvent', 'ExecMove', 'Acquisition'] as const) {
      expect(nodeTypes[typename]!.findCost(hinted[typename]!)).toEqual({
        assumedCost: 1,
        worstCost: null,
      });
    }
  });

  it('a lookup by domain reads one record', async () => {
    for (const [find, cost] of [
      [findCompanyByDomain, COMPANY_BY_DOMAIN_COST],
      [findInvestorByDomain, INVESTOR_BY_DOMAIN_COST],
    ] as const) {
      const { session, charged } = standIn();
      await find(session, 'acme.com');
      expect(charged()).toBe(cost.worstCost);
      expect(cost).toEqual({ assumedCost: 1, worstCost: 1 });
    }
  });
});

describe('a lookup the service does not bound still finds its record', () => {
  it('pages of 1, 2, 4, … 64, then 100: credits to reach a rank', () => {
    expect([1, 2, 3, 4, 7, 8, 127, 128, 227, 228, 300].map(lookupCredits)).toEqual([
      1, 3, 3, 7, 7, 15, 127, 227, 227, 327, 327,
    ]);
  });

  it.each(withWorstCost('unbounded'))(
    '%s: far down its list (rank 300), found for the pages up to it',
    async (typename, node) => {
      const { session, charged, requests } = standIn({ rank: 300 });
      expect(await node.find(session, hinted[typename]!)).toMatchObject({ id: UUID });
      expect(charged()).toBe(lookupCredits(300));
      expect(requests()).toBe(9);
    },
  );

  it.each(withWorstCost('unbounded'))(
    '%s: absent from a list that ends, null once the list ends',
    async (typename, node) => {
      const { session, charged } = standIn({ length: 250 });
      expect(await node.find(session, hinted[typename]!)).toBeNull();
      expect(charged()).toBe(250);
    },
  );

  it.each(withWorstCost('unbounded'))(
    "%s: stopped at the operation's budget, failing with CREDIT_BUDGET_EXHAUSTED",
    async (typename, node) => {
      const { session, charged } = standIn({ rank: 300, budget: 50 });
      await expect(node.find(session, hinted[typename]!)).rejects.toMatchObject({
        code: 'CREDIT_BUDGET_EXHAUSTED',
      });
      expect(charged()).toBe(50);
    },
  );
});
