import { describe, expect, it } from 'vitest';
import { companyNode } from '../../src/nodes/company-node.js';
import { fundingEventNode } from '../../src/nodes/funding-event-node.js';
import {
  decodeGlobalId,
  encodeGlobalId,
  formatLocalId,
  parseLocalId,
} from '../../src/nodes/global-id.js';
import { investorNode } from '../../src/nodes/investor-node.js';
import type { FundingEventRecord } from '../../src/upstream/types.js';

const uuid = '0b6f3c52-8d1e-4f0a-9a53-1c2d3e4f5a6b';
const companyId = '11111111-1111-4111-8111-111111111111';

describe('global ids', () => {
  it('round-trip the type, the uuid and hints with separators in them', () => {
    const local = formatLocalId(uuid, 'a|b', null, 'Zoë Ångström & Co');
    const decoded = decodeGlobalId(encodeGlobalId('Investor', local));
    expect(decoded.typename).toBe('Investor');
    expect(parseLocalId(decoded.id)).toEqual({ uuid, hints: ['a|b', '', 'Zoë Ångström & Co'] });
  });

  it('rejects ids that are not ours with INVALID_INPUT', () => {
    for (const bad of [
      'garbage',
      encodeGlobalId('User', uuid),
      encodeGlobalId('Company', 'not-a-uuid'),
      encodeGlobalId('Company', `${uuid}|%E0%A4%A`),
    ]) {
      expect(() => decodeGlobalId(bad, 'ids'), bad).toThrowError(
        expect.objectContaining({ extensions: { code: 'INVALID_INPUT', argument: 'ids' } }),
      );
    }
  });
});

describe('node ids', () => {
  it('a node type writes and reads its hints by name, from one declaration', () => {
    const event = {
      id: uuid,
      company: { id: companyId },
      discoveredAt: '2025-01-02T03:04:05.678Z',
      round: 'series|a',
    } as FundingEventRecord;
    const local = fundingEventNode.localId(event);
    // The written form stays what ids already issued carry: uuid|companyId|discoveredAt|round.
    expect(local).toBe(`${uuid}|${companyId}|2025-01-02T03:04:05.678Z|series%7Ca`);
    expect(fundingEventNode.parseLocalId(local)).toEqual({
      uuid,
      companyId,
      discoveredAt: '2025-01-02T03:04:05.678Z',
      round: 'series|a',
    });
  });

  it('an empty hint is absent, not an empty string', () => {
    expect(investorNode.parseLocalId(investorNode.localId({ id: uuid, name: null }))).toEqual({
      uuid,
    });
  });

  it('id arguments take a uuid or a global id of the right type', () => {
    const id = encodeGlobalId('Company', formatLocalId(uuid, 'acme.com'));
    expect(companyNode.idFromArgument(id, 'companyId')).toEqual({ uuid, domain: 'acme.com' });
    expect(companyNode.idFromArgument(uuid, 'companyId')).toEqual({ uuid });
    expect(() =>
      companyNode.idFromArgument(encodeGlobalId('Person', uuid), 'companyId'),
    ).toThrowError(/expects a Company id, got a Person id/);
    expect(() => companyNode.idFromArgument('acme', 'companyId')).toThrowError(
      expect.objectContaining({ extensions: { code: 'INVALID_INPUT', argument: 'companyId' } }),
    );
  });
});
