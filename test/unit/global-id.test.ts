import * as crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { companyNode } from '../../src/nodes/company-node.js';
import { fundingEventNode } from '../../src/nodes/funding-event-node.js';
import { encodeGlobalId, formatLocalId, parseLocalId } from '../../src/nodes/global-id.js';
import { decodeNodeId, readNodeId } from '../../src/nodes/node-types.js';

/** What `readNodeId` read, by type name. */
function readGlobalId(id: string, secret: string) {
  const read = readNodeId(id, secret);
  return read && { typename: read.node.typename, localId: read.localId };
}
const decodeGlobalId = decodeNodeId;
import { investorNode } from '../../src/nodes/investor-node.js';
import type { FundingEventRecord } from '../../src/upstream/types.js';

vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof crypto>();
  return {
    ...original,
    createHmac: vi.fn(original.createHmac),
    timingSafeEqual: vi.fn(original.timingSafeEqual),
  };
});

const uuid = '0b6f3c52-8d1e-4f0a-9a53-1c2d3e4f5a6b';
const companyId = '11111111-1111-4111-8111-111111111111';
const secret = 'test-secret';

const b64 = (text: string) => Buffer.from(text).toString('base64url');
const refused = (argument: string, forged: boolean) =>
  expect.objectContaining({
    message: forged
      ? expect.stringContaining(
          'is not an id this gateway issued (altered, or signed with another CURSOR_SECRET)',
        )
      : expect.stringMatching(/is not an id this gateway issued\.$/),
    extensions: { code: 'INVALID_INPUT', argument },
  });

describe('global ids', () => {
  it('round-trip the type, the uuid and hints with separators in them, signed', () => {
    const local = formatLocalId(uuid, 'a|b', null, 'Zoë Ångström & Co');
    const id = encodeGlobalId('Investor', local, secret);
    expect(id).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{16}$/);
    expect(id.split('.')[0]).toBe(b64(`Investor:${local}`));
    const decoded = decodeGlobalId(id, secret);
    expect(decoded).toEqual({ typename: 'Investor', id: local });
    expect(parseLocalId(decoded.id)).toEqual({ uuid, hints: ['a|b', '', 'Zoë Ångström & Co'] });
    expect(readGlobalId(id, secret)).toEqual({ typename: 'Investor', localId: local });
  });

  it('leave ids without hints as they were: unsigned, the same under any secret', () => {
    for (const [typename, local] of [
      ['Person', uuid],
      ['Investor', `${uuid}|`],
      ['FundingEvent', `${uuid}|||`],
    ] as const) {
      const id = encodeGlobalId(typename, local, secret);
      expect(id).toBe(b64(`${typename}:${local}`));
      expect(encodeGlobalId(typename, local, 'another-secret')).toBe(id);
      expect(decodeGlobalId(id, 'another-secret')).toEqual({ typename, id: local });
      expect(readGlobalId(id, secret)).toEqual({ typename, localId: local });
    }
  });

  it('keep the format of ids already issued with a given secret', () => {
    // H(k2 ‖ H(k1 ‖ m)), k1 and k2 the hex HMACs of the secret over the id labels (checked with
    // Python's hashlib). Changing it makes every id issued so far answer INVALID_INPUT.
    const local = formatLocalId(uuid, 'acme.com');
    expect(encodeGlobalId('Company', local, secret)).toBe(
      `${b64(`Company:${local}`)}.lWebUBzj5f6wx-qy`,
    );
  });

  it('rejects malformed ids with INVALID_INPUT naming the argument', () => {
    for (const bad of [
      'garbage',
      '',
      b64(`User:${uuid}`),
      b64('Company:not-a-uuid'),
      b64(`Company:${uuid}|%E0%A4%A`),
      `${b64(`Company:${uuid}|%E0%A4%A`)}.AAAAAAAAAAAAAAAA`,
    ]) {
      expect(() => decodeGlobalId(bad, secret, 'ids'), bad).toThrowError(refused('ids', false));
      expect(readGlobalId(bad, secret), bad).toBeNull();
    }
  });

  it('refuses altered and foreign signatures, and hints without one', () => {
    const local = formatLocalId(uuid, 'Sequoia Capital');
    const id = encodeGlobalId('Investor', local, secret);
    const [encoded, mac] = id.split('.') as [string, string];
    const flip = (c: string) => (c === 'A' ? 'B' : 'A');
    const forged = {
      'a flipped hint': `${b64(`Investor:${formatLocalId(uuid, 'Sequoia Capitam')}`)}.${mac}`,
      'another type': `${b64(`Company:${local}`)}.${mac}`,
      'a flipped MAC character': `${encoded}.${mac.slice(0, 5)}${flip(mac[5]!)}${mac.slice(6)}`,
      'a stripped MAC': encoded,
      'an empty MAC': `${encoded}.`,
      'a truncated MAC': `${encoded}.${mac.slice(0, 15)}`,
      'a lengthened MAC': `${encoded}.${mac}A`,
      'a MAC from another secret': encodeGlobalId('Investor', local, 'another-secret'),
      'a MAC on an id without hints': `${b64(`Person:${uuid}`)}.${mac}`,
      // An HMAC under the secret itself, as cursors are signed: the id key is derived apart.
      'a cursor-style signature': `${encoded}.${crypto
        .createHmac('sha256', secret)
        .update(`Investor:${local}`)
        .digest('base64url')
        .slice(0, 16)}`,
    };
    for (const [what, bad] of Object.entries(forged)) {
      expect(() => decodeGlobalId(bad, secret, 'id'), what).toThrowError(refused('id', true));
      expect(readGlobalId(bad, secret), what).toBeNull();
    }
    expect(readGlobalId(id, secret)).toEqual({ typename: 'Investor', localId: local });
  });

  it('compares signatures in constant time', () => {
    const id = encodeGlobalId('Company', formatLocalId(uuid, 'acme.com'), secret);
    const tampered = `${id.slice(0, -1)}${id.endsWith('A') ? 'B' : 'A'}`;
    vi.mocked(crypto.timingSafeEqual).mockClear();
    expect(() => decodeGlobalId(tampered, secret)).toThrowError(refused('id', true));
    expect(crypto.timingSafeEqual).toHaveBeenCalledTimes(1);
    expect(decodeGlobalId(id, secret).typename).toBe('Company');
    expect(crypto.timingSafeEqual).toHaveBeenCalledTimes(2);
  });

  it('derives the keys once per secret, not per id', () => {
    const fresh = `secret-${Math.random()}`;
    vi.mocked(crypto.createHmac).mockClear();
    for (let i = 0; i < 50; i++) {
      const id = encodeGlobalId('Company', formatLocalId(uuid, `c${i}.example`), fresh);
      expect(readGlobalId(id, fresh)).not.toBeNull();
    }
    expect(crypto.createHmac).toHaveBeenCalledTimes(2);
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

  it('id arguments take a uuid or a global id of the right type, signed with the secret', () => {
    const id = encodeGlobalId('Company', formatLocalId(uuid, 'acme.com'), secret);
    expect(companyNode.idFromArgument(id, 'companyId', secret)).toEqual({
      uuid,
      domain: 'acme.com',
    });
    expect(companyNode.idFromArgument(uuid, 'companyId', secret)).toEqual({ uuid });
    expect(() =>
      companyNode.idFromArgument(encodeGlobalId('Person', uuid, secret), 'companyId', secret),
    ).toThrowError(/expects a Company id, got a Person id/);
    expect(() => companyNode.idFromArgument('acme', 'companyId', secret)).toThrowError(
      expect.objectContaining({
        message: expect.stringContaining('must be a Company id or UUID'),
        extensions: { code: 'INVALID_INPUT', argument: 'companyId' },
      }),
    );
    for (const forged of [
      id.split('.')[0]!,
      encodeGlobalId('Company', formatLocalId(uuid, 'acme.com'), 'another-secret'),
    ]) {
      expect(() => companyNode.idFromArgument(forged, 'companyId', secret)).toThrowError(
        refused('companyId', true),
      );
    }
  });
});
