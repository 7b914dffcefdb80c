let second = Number.NaN;
let prefix = '';

/**
 * pino's `stdTimeFunctions.isoTime`, the same `,"time":"2026-11-23T14:22:29.543Z"`, with the date
 * and time to the second formatted once a second rather than on every line: `toISOString` was about
 * a fifth of a repeat view's log line.
 */
export function isoTime(now = Date.now()): string {
  const whole = Math.floor(now / 1000);
  if (whole !== second) {
    second = whole;
    prefix = `,"time":"${new Date(whole * 1000).toISOString().slice(0, 20)}`;
  }
  const ms = now - whole * 1000;
  return `${prefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z"`;
}
