const PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * Parses an ISO-8601 timestamp and returns it normalized to the service's form
 * (`2024-01-02T03:04:05.678Z`), or `null` when it is not one. Accepted: date-only
 * `2024-01-02` (midnight UTC), date-time with or without seconds and fraction,
 * with `Z`, a `±hh:mm`/`±hhmm` offset, or no zone (read as UTC). Fractions
 * beyond milliseconds are truncated. Impossible dates (2024-02-30) are rejected.
 * Normalized timestamps compare correctly as plain strings.
 */
export function parseTimestamp(text: string): string | null {
  const m = PATTERN.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '', zone = 'Z'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCMonth() !== month - 1) return null;
  let ms = date.getTime() + hour * 3_600_000 + minute * 60_000 + second * 1000;
  ms += Number(fraction.padEnd(3, '0').slice(0, 3));
  if (zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offsetHours = Number(digits.slice(0, 2));
    const offsetMinutes = Number(digits.slice(2));
    if (offsetHours > 23 || offsetMinutes > 59) return null;
    ms -= sign * (offsetHours * 3_600_000 + offsetMinutes * 60_000);
  }
  const normalized = new Date(ms).toISOString();
  return /^\d{4}-/.test(normalized) ? normalized : null;
}
