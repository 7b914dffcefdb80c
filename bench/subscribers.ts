import { Agent, request, type ClientRequest } from 'node:http';
import { memory } from './processes.js';

/** Round filters of the fan-out: one poller each (the sandbox takes any round as a new event's). */
const ROUNDS = [
  'pre_seed',
  'seed',
  'series_a',
  'series_b',
  'series_c',
  'series_d',
  'series_e',
  'growth',
  'debt',
  'grant',
] as const;

const SUBSCRIPTION = `subscription Fanout($round: [String!]) {
  fundingEventAdded(round: $round) { id round company { name } }
}`;

/** Bounds of each phase, so that a stuck gateway fails the run instead of hanging it. */
const OPEN_TIMEOUT_MS = 30_000;
const FIRST_POLL_TIMEOUT_MS = 10_000;
const DELIVERY_TIMEOUT_MS = 15_000;

/** What the fan-out measured. */
export interface FanOutResult {
  subscribers: number;
  filters: number;
  /** `gateway_subscription_pollers` with every subscriber in. */
  pollers: number;
  /** Subscribers that got their filter's new event. */
  delivered: number;
  /** From the receive time of the poll that found the event (sandbox log `at`) to its arrival. */
  maxLatencyMs: number;
  p99LatencyMs: number;
  p50LatencyMs: number;
  /** Gateway VmRSS before the subscribers connected and after the event reached them. */
  rssBeforeMb: number;
  rssAfterMb: number;
  problems: string[];
}

interface LogEntry {
  endpoint: string | null;
  params: Record<string, string[]>;
  at: number;
}

interface Subscriber {
  round: string;
  request: ClientRequest;
  status: number | null;
  /** Date.now() when the first `next` event arrived. */
  arrivedAt: number | null;
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`subscriptions: ${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function metric(metricsUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : NaN;
}

async function sandboxCall(sandboxUrl: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${sandboxUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
  return response.json();
}

/** One SSE subscription on a connection of its own (graphql-sse's distinct connections mode). */
function subscribe(gatewayUrl: string, apiKey: string, round: string, agent: Agent): Subscriber {
  const body = JSON.stringify({ query: SUBSCRIPTION, variables: { round: [round] } });
  const req = request(`${gatewayUrl}/graphql`, {
    method: 'POST',
    agent,
    headers: {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      accept: 'text/event-stream',
      'x-api-key': apiKey,
    },
  });
  const subscriber: Subscriber = { round, request: req, status: null, arrivedAt: null };
  req.on('response', (res) => {
    subscriber.status = res.statusCode ?? 0;
    let buffered = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      if (subscriber.arrivedAt !== null) return;
      buffered += chunk;
      // Yoga's SSE: `event: next` then `data: {...}`; keep-alive comments start with ':'.
      if (/^event: next$/m.test(buffered) && /^data: \{/m.test(buffered)) {
        subscriber.arrivedAt = Date.now();
        buffered = '';
      }
    });
    res.on('error', () => {});
  });
  req.on('error', () => {});
  req.end(body);
  return subscriber;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * `subscribers` SSE subscriptions spread evenly over 10 round filters on one gateway (polling
 * every second), then one new event per filter in the sandbox (started with `--controls`): the
 * pollers, each subscriber's delay from the poll that found its event, and the RSS growth.
 */
export async function subscriptionFanOut(options: {
  sandboxUrl: string;
  gatewayUrl: string;
  /** Where the gateway serves `/metrics` (`METRICS_PORT`: with an upstream, not on `PORT`). */
  metricsUrl: string;
  gatewayPid: number;
  apiKey: string;
  subscribers: number;
}): Promise<FanOutResult> {
  const { sandboxUrl, gatewayUrl, metricsUrl, gatewayPid, apiKey } = options;
  const problems: string[] = [];
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const subscribers: Subscriber[] = [];
  try {
    await sandboxCall(sandboxUrl, '/__sandbox/reset', {});
    const rssBeforeMb = memory(gatewayPid).rssMb;
    const opened = Date.now();
    for (let i = 0; i < options.subscribers; i++) {
      subscribers.push(subscribe(gatewayUrl, apiKey, ROUNDS[i % ROUNDS.length]!, agent));
    }
    await until(
      async () =>
        subscribers.every((s) => s.status !== null) &&
        (await metric(metricsUrl, 'gateway_subscription_subscribers')) === options.subscribers,
      OPEN_TIMEOUT_MS,
      `${options.subscribers} subscribers not in`,
    );
    const refused = subscribers.filter((s) => s.status !== 200).length;
    if (refused > 0)
      problems.push(`subscriptions: ${refused} subscriptions answered other than 200`);
    const pollers = await metric(metricsUrl, 'gateway_subscription_pollers');
    // Every filter's poller has polled once since the last subscriber came in: the events added
    // next are new to all of them.
    const allIn = Date.now();
    await until(
      async () => {
        const { entries } = (await sandboxCall(sandboxUrl, '/__sandbox/log')) as {
          entries: LogEntry[];
        };
        const polled = new Set(
          entries
            .filter((e) => e.params['since'] && e.at > allIn)
            .map((e) => e.params['round']?.[0]),
        );
        return ROUNDS.every((round) => polled.has(round));
      },
      FIRST_POLL_TIMEOUT_MS,
      'a poll of every filter',
    );

    const before = Date.now();
    const added = (await sandboxCall(
      sandboxUrl,
      '/__sandbox/events',
      ROUNDS.map((round) => ({ kind: 'fundingEvent', round })),
    )) as { data: { round: string; discoveredAt: string }[] };
    const after = Date.now();
    // When each event was in the sandbox: its discoveredAt (the sandbox's clock, the one of
    // the log's `at`), unless the sandbox dated it later than now to keep it first in its list.
    const addedAt = new Map<string, number>();
    for (const record of added.data) {
      const at = Date.parse(record.discoveredAt);
      addedAt.set(record.round, at >= before && at <= after ? at : after);
    }
    await until(
      () => subscribers.every((s) => s.arrivedAt !== null),
      DELIVERY_TIMEOUT_MS,
      'the new event at every subscriber',
    ).catch((error: Error) => problems.push(error.message));
    const rssAfterMb = memory(gatewayPid).rssMb;

    const { entries } = (await sandboxCall(sandboxUrl, '/__sandbox/log')) as {
      entries: LogEntry[];
    };
    // The poll that found a filter's event: its first poll received once the event was in.
    const foundAt = new Map<string, number>();
    for (const entry of entries) {
      const round = entry.params['round']?.[0];
      if (!round || !entry.params['since'] || foundAt.has(round)) continue;
      if (entry.at >= (addedAt.get(round) ?? Infinity)) foundAt.set(round, entry.at);
    }
    const latencies = subscribers
      .filter((s) => s.arrivedAt !== null && foundAt.has(s.round))
      .map((s) => s.arrivedAt! - foundAt.get(s.round)!)
      .sort((a, b) => a - b);
    console.log(
      `subscriptions: ${options.subscribers} opened in ${((allIn - opened) / 1000).toFixed(1)} s, ` +
        `${pollers} pollers, delivered ${latencies.length}`,
    );
    return {
      subscribers: options.subscribers,
      filters: ROUNDS.length,
      pollers,
      delivered: subscribers.filter((s) => s.arrivedAt !== null).length,
      maxLatencyMs: latencies.at(-1) ?? NaN,
      p99LatencyMs: percentile(latencies, 99),
      p50LatencyMs: percentile(latencies, 50),
      rssBeforeMb,
      rssAfterMb,
      problems,
    };
  } finally {
    for (const subscriber of subscribers) subscriber.request.destroy();
    agent.destroy();
  }
}
