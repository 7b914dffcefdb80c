/** Every scalar field of Company, and its country (schema.graphql). */
const COMPANY_FIELDS = `uuid id name domain description linkedinHandle linkedinUrl linkedinGeoId
  linkedinIndustryId hqCity hqCountry { code name } industryGroup industrySubTags
  employeeCountBucket foundedYear businessModel createdAt updatedAt`;

/** Every field of FundingEvent; under `investors` only the fields that come with the event. */
const FUNDING_EVENT_FIELDS = `uuid id round amountUsdCents amountUsd amountOriginalCurrency
  amountOriginalCents announcedAt discoveredAt sources { url extractedAt }
  investors { id uuid name } company { ${COMPANY_FIELDS} }`;

/** 20 funding events with every field. */
export const LIST_QUERY = `{ fundingEvents(first: 20) { nodes { ${FUNDING_EVENT_FIELDS} } } }`;

/** 100 companies with every field. */
export const WIDE_QUERY = `{ companies(first: 100) { nodes { ${COMPANY_FIELDS} } } }`;

/** 20 funding events, each company's 3 latest executive moves. */
export const WALK_QUERY = `{ fundingEvents(first: 20) { nodes { id round amountUsdCents company { name execMoves(first: 3) { nodes { id role moveType person { name } } } } } } }`;

/** The uncached scenarios' queries by name, for the A/B tools. */
export const QUERIES: Readonly<Record<'list' | 'wide' | 'walk', string>> = {
  list: LIST_QUERY,
  wide: WIDE_QUERY,
  walk: WALK_QUERY,
};

/** 20 companies, each with its 3 latest funding events. */
export const FAN_OUT_QUERY = `{ companies(first: 20) { nodes { id name fundingEvents(first: 3) { nodes { id round amountUsdCents } } } } }`;

/** Scenario names, in run order. */
export type ScenarioId =
  | 'list'
  | 'wide'
  | 'walk'
  | 'list-2-workers'
  | 'list-cached'
  | 'walk-cached'
  | 'walk-20ms'
  | 'fan-out-50ms';

/** The floor servers of `npm run bench`: the least a Node server, and a Yoga gateway, cost here. */
export type Floor = 'floor' | 'yoga-floor';

/** One thing to measure: a GraphQL query, and the REST call it stands for when there is one. */
export interface Scenario {
  id: ScenarioId;
  /** One line for the report. */
  title: string;
  query: string;
  /** The equivalent direct REST path (with query string), measured side by side. */
  restPath?: string;
  /** Latency the sandbox adds to every request during this scenario; 0 for none. */
  sandboxLatencyMs: number;
  /** Measured at concurrency 1 only (latency-bound scenarios), or also at saturation. */
  saturate: boolean;
  /**
   * Through a gateway with the page cache on, asked the same query again and again: after the
   * warm-up every page is a hit. The other scenarios run on a gateway with the cache off.
   */
  cached?: boolean;
  /**
   * Through a gateway of `WORKERS` processes (cache off), at the saturating concurrency only: its
   * CPU is the sum over the primary and the workers.
   */
  workers?: number;
  /**
   * Also measured through these floors, in the same run: bench/yoga-floor-server.mjs, beside which
   * issue 39 bounds the gateway's CPU, and bench/floor-server.mjs (no GraphQL), which answers the
   * two lists only.
   */
  floors?: readonly Floor[];
  /** Also measured through an earlier build with `--before <dist>`: issue 13's two lists. */
  compared?: boolean;
}

/** The scenarios of the issue, in run order (latency-bound ones last). */
export const SCENARIOS: readonly Scenario[] = [
  {
    id: 'list',
    title: '20 funding events, every field',
    query: LIST_QUERY,
    restPath: '/v1/funding-events?limit=20',
    sandboxLatencyMs: 0,
    saturate: true,
    floors: ['floor', 'yoga-floor'],
    compared: true,
  },
  {
    id: 'wide',
    title: '100 companies, every field',
    query: WIDE_QUERY,
    restPath: '/v1/companies?limit=100',
    sandboxLatencyMs: 0,
    saturate: true,
    floors: ['floor', 'yoga-floor'],
    compared: true,
  },
  {
    id: 'walk',
    title: "20 funding events, each company's 3 latest exec moves",
    query: WALK_QUERY,
    sandboxLatencyMs: 0,
    saturate: true,
    floors: ['yoga-floor'],
  },
  {
    id: 'list-2-workers',
    title: '20 funding events, every field, through WORKERS=2 (next to `list`, one process)',
    query: LIST_QUERY,
    sandboxLatencyMs: 0,
    saturate: true,
    workers: 2,
  },
  {
    id: 'list-cached',
    title: '20 funding events, every field, again and again (page cache hits)',
    query: LIST_QUERY,
    restPath: '/v1/funding-events?limit=20',
    sandboxLatencyMs: 0,
    saturate: true,
    cached: true,
  },
  {
    id: 'walk-cached',
    title: 'the walk again and again (page cache hits)',
    query: WALK_QUERY,
    sandboxLatencyMs: 0,
    saturate: true,
    cached: true,
  },
  {
    id: 'walk-20ms',
    title: 'the walk, sandbox latency 20 ms per request',
    query: WALK_QUERY,
    sandboxLatencyMs: 20,
    saturate: false,
  },
  {
    id: 'fan-out-50ms',
    title: '20 companies × fundingEvents(first: 3), sandbox latency 50 ms',
    query: FAN_OUT_QUERY,
    sandboxLatencyMs: 50,
    saturate: false,
  },
];

/**
 * Records a GraphQL result holds: the elements of every `nodes` array, at any depth. Embedded
 * objects (an event's company, a move's person) come with their record and are not counted.
 */
export function countRecords(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + countRecords(item), 0);
  if (typeof value !== 'object' || value === null) return 0;
  let count = 0;
  for (const [key, child] of Object.entries(value)) {
    if (key === 'nodes' && Array.isArray(child)) count += child.length;
    count += countRecords(child);
  }
  return count;
}
