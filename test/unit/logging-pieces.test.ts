import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/logging/iso-time.js';
import { BoundedNames } from '../../src/metrics/bounded-names.js';
import { captureLog } from '../helpers/capture-log.js';

describe('isoTime', () => {
  it("writes pino's isoTime field, within a second and across seconds, days and years", () => {
    const times = [
      Date.UTC(2026, 10, 23, 14, 22, 29, 543),
      Date.UTC(2026, 10, 23, 14, 22, 29, 7),
      Date.UTC(2026, 10, 23, 14, 22, 29, 40),
      Date.UTC(2026, 10, 23, 14, 22, 30, 0),
      Date.UTC(2026, 10, 23, 14, 22, 29, 999),
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      Date.UTC(2027, 0, 1, 0, 0, 0, 1),
    ];
    for (const now of times) {
      expect(isoTime(now)).toBe(`,"time":"${new Date(now).toISOString()}"`);
    }
  });

  it("is the line's time (pino calls it with no argument)", () => {
    const log = captureLog('info');
    const before = Date.now();
    log.logger.info('now');
    const time = Date.parse(String(log.lines[0]?.['time']));
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(Date.now());
  });
});

describe('createLogger', () => {
  it('censors keys wherever a mistake would put them', () => {
    const log = captureLog('info');
    log.logger.info(
      {
        apiKey: 'k1-secret',
        request: { apiKey: 'k2-secret', headers: { 'x-api-key': 'k3-secret' } },
        headers: { authorization: 'Bearer k4-secret', 'x-api-key': 'k5-secret' },
        key: 'k6-secret',
        token: 'eyJ-secret',
        upstreamKey: 'k7-secret',
      },
      'careless',
    );
    expect(log.text()).not.toContain('secret');
    expect(log.lines[0]).toMatchObject({
      level: 'info',
      msg: 'careless',
      apiKey: '[redacted]',
      request: { apiKey: '[redacted]', headers: { 'x-api-key': '[redacted]' } },
      headers: { authorization: '[redacted]', 'x-api-key': '[redacted]' },
      token: '[redacted]',
      upstreamKey: '[redacted]',
    });
  });
});

describe('BoundedNames', () => {
  it('keeps the first names, then answers other; no name is unnamed; a non-name is other', () => {
    const names = new BoundedNames(2);
    expect(names.label('A')).toBe('A');
    expect(names.label(null)).toBe('unnamed');
    expect(names.label('B')).toBe('B');
    expect(names.label('C')).toBe('other');
    expect(names.label('A')).toBe('A');
    expect(new BoundedNames(5).label('bad name')).toBe('other');
    expect(new BoundedNames(5).label('x'.repeat(65))).toBe('other');
  });
});
