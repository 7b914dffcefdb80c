import { describe, expect, it } from 'vitest';
import {
  decodeGlobalId,
  encodeGlobalId,
  formatLocalId,
  localIdFromArgument,
  parseLocalId,
} from '../../src/global-id.js';

const uuid = '0b6f3c52-8d1e-4f0a-9a53-1c2d3e4f5a6b';

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

  it('id arguments take a uuid or a global id of the right type', () => {
    const id = encodeGlobalId('Company', formatLocalId(uuid, 'acme.com'));
    expect(localIdFromArgument(id, 'Company', 'companyId')).toEqual({ uuid, hints: ['acme.com'] });
    expect(localIdFromArgument(uuid, 'Company', 'companyId')).toEqual({ uuid, hints: [] });
    expect(() =>
      localIdFromArgument(encodeGlobalId('Person', uuid), 'Company', 'companyId'),
    ).toThrowError(/expects a Company id, got a Person id/);
    expect(() => localIdFromArgument('acme', 'Company', 'companyId')).toThrowError(
      expect.objectContaining({ extensions: { code: 'INVALID_INPUT', argument: 'companyId' } }),
    );
  });
});
