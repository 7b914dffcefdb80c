/**
 * Measures, on the sandbox's data, the sizes the service does not bound and the credit estimate
 * assumes: investors per funding round (ROUND_INVESTORS_ASSUMED), the rank of an investor in a
 * search for its own name (INVESTOR_NAME_RANK_ASSUMED), and how far down its lookup list a record
 * sits (LIST_RANK_ASSUMED). Prints one table per dataset: the default sizes, and the test stack's.
 * Run: `npx tsx scripts/measure-assumed-sizes.ts` (about 15 s).
 */
import {
  DEFAULT_SIZES,
  generateDataset,
  startSandbox,
  type Sandbox,
} from '../src/sandbox/index.js';
import { SMALL_SIZES } from '../test/helpers/start-stack.js';
import { justAfter, justBefore } from '../src/nodes/find-in-list.js';
import { lookupCredits } from '../src/nodes/lookup-cost.js';

/** Records compared per kind of lookup: every n-th one, so that a run takes seconds. */
const SAMPLES = 2_000;

type Row = { id: string };

/** The 1-based position of the record `id` in the list `path?query` (0 when absent). */
async function rankIn(sandbox: Sandbox, path: string, query: URLSearchParams, id: string) {
  let cursor: string | null = null;
  let position = 0;
  for (;;) {
    const params = new URLSearchParams(query);
    params.set('limit', '100');
    if (cursor) params.set('cursor', cursor);
    const response = await fetch(`${sandbox.url}/v1/${path}?${params}`, {
      headers: { 'x-api-key': sandbox.keys.demo },
    });
    const page = (await response.json()) as {
      data: Row[];
      pagination: { hasMore: boolean; nextCursor: string | null };
    };
    for (const record of page.data) {
      position++;
      if (record.id === id) return position;
    }
    if (!page.pagination.hasMore || !page.pagination.nextCursor) return 0;
    cursor = page.pagination.nextCursor;
  }
}

function summary(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const mean = sorted.reduce((s, v) => s + v, 0) / sorted.length;
  return {
    n: sorted.length,
    mean: Number(mean.toFixed(2)),
    p50: at(0.5),
    p75: at(0.75),
    p90: at(0.9),
    p99: at(0.99),
    max: sorted.at(-1)!,
    'share of 1': Number((sorted.filter((v) => v === 1).length / sorted.length).toFixed(2)),
  };
}

function sample<T>(records: readonly T[]): T[] {
  const step = Math.max(1, Math.floor(records.length / SAMPLES));
  return records.filter((_, i) => i % step === 0);
}

async function measure(name: string, sizes?: typeof SMALL_SIZES) {
  const sandbox = await startSandbox({ port: 0, quiet: true, sizes });
  const dataset = generateDataset(42, { ...DEFAULT_SIZES, ...sizes });
  try {
    const perRound = dataset.fundingEvents.map((e) => e.investors.length);

    const investorRank = new Map<string, number>();
    for (const investor of dataset.investors) {
      const query = new URLSearchParams({ search: investor.name });
      investorRank.set(investor.id, await rankIn(sandbox, 'investors', query, investor.id));
    }
    const refs = dataset.fundingEvents.flatMap((e) => e.investors);
    const refRanks = refs.map((r) => investorRank.get(r.id)!);
    // What the investor details of one round cost: its investors' searches, each page charged.
    const roundCredits = dataset.fundingEvents.map((e) =>
      e.investors.reduce((sum, r) => sum + lookupCredits(investorRank.get(r.id)!), 0),
    );

    const eventRanks = async <T extends Row>(
      path: string,
      records: readonly T[],
      query: (record: T) => Record<string, string | undefined>,
    ) => {
      const ranks: number[] = [];
      for (const record of sample(records)) {
        const params = new URLSearchParams();
        for (const [key, value] of Object.entries(query(record))) {
          if (value !== undefined) params.set(key, value);
        }
        ranks.push(await rankIn(sandbox, path, params, record.id));
      }
      return ranks;
    };
    const funding = await eventRanks('funding-events', dataset.fundingEvents, (e) => ({
      companyId: e.company.id,
      since: justBefore(e.discoveredAt),
      round: e.round,
    }));
    const moves = await eventRanks('exec-moves', dataset.execMoves, (m) => ({
      personId: m.person.id,
      since: justBefore(m.discoveredAt),
      until: justAfter(m.discoveredAt),
    }));
    const deals = await eventRanks('acquisitions', dataset.acquisitions, (a) => ({
      companyId: a.acquirer.id,
      since: justBefore(a.discoveredAt),
    }));
    const companies = await eventRanks('companies', dataset.companies, (c) => ({
      domain: c.domain,
    }));

    console.log(`\n${name}`);
    console.table({
      'investors per round': summary(perRound),
      'investor rank in its name search (directory)': summary([...investorRank.values()]),
      'investor rank in its name search (per round reference)': summary(refRanks),
      "credits of one round's investor details": summary(roundCredits),
      'funding event rank in its lookup list': summary(funding),
      'exec move rank in its lookup list': summary(moves),
      'acquisition rank in its lookup list': summary(deals),
      'company rank by its domain': summary(companies),
    });
  } finally {
    await sandbox.close();
  }
}

await measure('default sizes (seed 42)');
await measure('the test stack (SMALL_SIZES, seed 42)', SMALL_SIZES);
