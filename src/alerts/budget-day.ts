/** The day (UTC) an alert's daily budget counts: `YYYY-MM-DD`. */
export function dayOf(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

/** The start of the day (UTC) after the one of `time`: when a spent daily budget is whole again. */
export function nextDay(time: number): number {
  const day = new Date(time);
  return Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + 1);
}
