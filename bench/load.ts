import autocannon from 'autocannon';

/** One HTTP request to repeat, and how to tell a good answer from a bad one. */
export interface LoadTarget {
  /** Origin, e.g. `http://127.0.0.1:4000`. */
  origin: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** False for a 200 answer that is still wrong (e.g. a GraphQL `errors` array). */
  verify(body: string): boolean;
}

/** How long to drive a target: for `durationS`, or `amount` requests capped at `maxMs`. */
export type LoadLength = { durationS: number } | { amount: number; maxMs: number };

/** What one load run measured. Latencies are unrounded (autocannon's per-response hrtime). */
export interface LoadResult {
  connections: number;
  /** Wall time of the run in seconds. */
  seconds: number;
  /** Responses received (any status). */
  responses: number;
  /** Requests sent: the responses plus those still in flight when the run stopped. */
  sent: number;
  /** Non-2xx answers, connection errors, timeouts and bodies that failed `verify`. */
  failures: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  /** Autocannon's own (whole-millisecond) p50 and p99, for comparison. */
  autocannonP50Ms: number;
  autocannonP99Ms: number;
}

/** Latencies kept per run; past this, later responses are counted but not kept. */
const MAX_SAMPLES = 2_000_000;

/** The `q` quantile (0..1) of sorted values, nearest rank. */
export function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

/** Drives `target` with autocannon over `connections` keep-alive connections. */
export async function runLoad(
  target: LoadTarget,
  connections: number,
  length: LoadLength,
): Promise<LoadResult> {
  const latencies = new Float64Array(
    'amount' in length ? length.amount + connections : MAX_SAMPLES,
  );
  let count = 0;
  const started = performance.now();
  let finish: (error: unknown, result: autocannon.Result) => void = () => undefined;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finish = (error, result) => (error ? reject(error as Error) : resolve(result));
  });
  const instance = autocannon(
    {
      url: `${target.origin}${target.path}`,
      method: target.method,
      headers: target.headers,
      ...(target.body === undefined ? {} : { body: target.body }),
      connections,
      pipelining: 1,
      timeout: 30,
      verifyBody: (body) => target.verify(String(body)),
      ...('amount' in length ? { amount: length.amount } : { duration: length.durationS }),
    },
    (error, result) => finish(error, result),
  );
  instance.on('response', (_client, _status, _bytes, responseTime) => {
    if (count < latencies.length) latencies[count] = responseTime;
    count += 1;
  });
  const timer = 'amount' in length ? setTimeout(() => instance.stop(), length.maxMs) : undefined;
  const result = await done.finally(() => clearTimeout(timer));
  const seconds = (performance.now() - started) / 1000;
  const sorted = latencies.slice(0, Math.min(count, latencies.length)).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    connections,
    seconds,
    responses: count,
    sent: Math.max(count, result.requests.sent),
    failures: result.non2xx + result.errors + result.mismatches,
    requestsPerSecond: count / seconds,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    meanMs: sorted.length ? sum / sorted.length : NaN,
    autocannonP50Ms: result.latency.p50,
    autocannonP99Ms: result.latency.p99,
  };
}
