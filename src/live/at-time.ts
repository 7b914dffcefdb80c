/** The longest delay `setTimeout` takes (about 24.8 days); a longer one would fire at once. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * Calls `fire` at `when` (ms since the epoch), however far off, without holding the process open;
 * returns how to cancel it.
 */
export function atTime(when: number, fire: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const delay = when - Date.now();
    if (delay <= 0) {
      timer = undefined;
      fire();
      return;
    }
    timer = setTimeout(arm, Math.min(delay, MAX_DELAY_MS));
    timer.unref();
  };
  arm();
  return () => clearTimeout(timer);
}
