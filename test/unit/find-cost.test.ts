import { describe, expect, it } from 'vitest';
import {
  COMPANY_BY_DOMAIN_COST,
  findCompanyByDomain,
  companyNode,
} from '../../src/nodes/company-node.js';
import {
  findInvestorByDomain,
  INVESTOR_BY_DOMAIN_COST,
  investorNode,
} from '../../src/nodes/investor-node.js';
import { nodeTypes } from '../../src/nodes/node-types.js';
import type { NodeId } from '../../src/nodes/node-type.js';
import { createUpstream } from '../../src/upstream/create-upstream.js';
import { UpstreamSession } from '../../src/upstream/upstream-session.js';
import { envelope, mockService, SERVICE } from '../helpers/mock-service.js';

/**
 * A service at its most expensive for a lookup: every page is full, says there is more, and
 * holds only other records. What a lookup is charged there is the most it can ever cost.
 */
function worstCaseSession() {
  const service = mockService();
  let charged = 0;
  let serial = 0;
  service.pool
    .intercept({ path: () => true })
    .reply(200, ({ path }) => {
      const limit = Number(new URL(path, SERVICE).searchParams.get('limit'));
      charged += limit;
      const data = Array.from({ length: limit }, () => ({ id: `other-${serial++}` }));
      return envelope(data, { nextCursor: `c${serial}` });
    })
    .persist();
  const upstream = createUpstream({
    baseUrl: SERVICE,
    timeoutMs: 5_000,
    dispatcher: service.agent,
  });
  const session = new UpstreamSession(upstream.shared, { apiKey: 'key', concurrency: 4 });
  return { session, charged: () => charged };
}

const UUID = '0b6f1c2e-1234-4a5b-8c9d-000000000001';
const OTHER = '0b6f1c2e-1234-4a5b-8c9d-000000000002';
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

describe("each node type's findCost is what its find spends at worst", () => {
  it.each(Object.entries(nodeTypes))('%s, with every hint', async (typename, node) => {
    const { session, charged } = worstCaseSession();
    expect(await node.find(session, hinted[typename]!)).toBeNull();
    expect(charged()).toBe(node.findCost(hinted[typename]!));
    expect(charged()).toBeGreaterThan(0);
  });

  it.each(Object.entries(nodeTypes))('%s, from a bare UUID', async (_typename, node) => {
    const { session, charged } = worstCaseSession();
    expect(await node.find(session, { uuid: UUID })).toBeNull();
    expect(charged()).toBe(node.findCost({ uuid: UUID }));
  });

  it('names the costs the README gives', () => {
    expect(companyNode.findCost(hinted.Company!)).toBe(26);
    expect(companyNode.findCost({ uuid: UUID })).toBe(3);
    expect(investorNode.findCost(hinted.Investor!)).toBe(127);
    expect(investorNode.findCost({ uuid: UUID })).toBe(0);
  });

  it('a lookup by domain reads one record', async () => {
    for (const [find, cost] of [
      [findCompanyByDomain, COMPANY_BY_DOMAIN_COST],
      [findInvestorByDomain, INVESTOR_BY_DOMAIN_COST],
    ] as const) {
      const { session, charged } = worstCaseSession();
      await find(session, 'acme.com');
      expect(charged()).toBe(cost);
      expect(cost).toBe(1);
    }
  });
});
