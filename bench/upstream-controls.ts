/** The sandbox's totals since its last reset (`GET /__sandbox/counters`). */
export interface Counters {
  requests: number;
  records: number;
  byEndpoint: Record<string, number>;
  byStatus: Record<string, number>;
}

async function call(url: string, method: 'GET' | 'POST'): Promise<unknown> {
  const response = await fetch(url, { method, signal: AbortSignal.timeout(5_000) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url}: HTTP ${response.status} ${text}`);
  return JSON.parse(text) as unknown;
}

/**
 * The sandbox's test controls (started with `--controls`), used to set latency and to count the
 * upstream requests and records (credits) the gateway causes.
 */
export class UpstreamControls {
  constructor(private readonly baseUrl: string) {}

  /** Request and record totals; control calls are not counted. */
  async counters(): Promise<Counters> {
    const body = (await call(`${this.baseUrl}/__sandbox/counters`, 'GET')) as Partial<Counters>;
    if (typeof body.requests !== 'number' || typeof body.records !== 'number') {
      throw new Error(`unexpected /__sandbox/counters answer: ${JSON.stringify(body)}`);
    }
    return {
      requests: body.requests,
      records: body.records,
      byEndpoint: body.byEndpoint ?? {},
      byStatus: body.byStatus ?? {},
    };
  }

  /** Clears the request log and counters (keeps the log short, so it costs the sandbox little). */
  async reset(): Promise<void> {
    await call(`${this.baseUrl}/__sandbox/reset`, 'POST');
  }

  /** Delay the sandbox adds before every /v1 answer. */
  async setLatency(fixedMs: number, jitterMs = 0): Promise<void> {
    await call(`${this.baseUrl}/__sandbox/latency?fixedMs=${fixedMs}&jitterMs=${jitterMs}`, 'POST');
  }
}
