/**
 * Global-id micro-benchmark: µs to write (encode and sign) and to read (decode and verify) one id,
 * over the ids a funding-event list hands out (each event, its company, its investors; all carry
 * hints), from a small sandbox data set. In-process, no server. For reference, in the same run:
 * the unsigned encoding ids had before they were signed, and a `createHmac` signature.
 *
 * Run: npx tsx bench/experiments/global-id-bench.ts [--rounds 7]
 */
import { createHmac } from 'node:crypto';
import { parseArgs } from 'node:util';
import { DEFAULT_CURSOR_SECRET } from '../../src/config.js';
import { companyNode } from '../../src/nodes/company-node.js';
import { fundingEventNode } from '../../src/nodes/funding-event-node.js';
import { encodeGlobalId } from '../../src/nodes/global-id.js';
import { decodeNodeId } from '../../src/nodes/node-types.js';
import { investorNode } from '../../src/nodes/investor-node.js';
import { generateDataset } from '../../src/sandbox/index.js';
import type { FundingEventRecord } from '../../src/upstream/types.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '7' } } });
const ROUNDS = Number(values.rounds);
const secret = DEFAULT_CURSOR_SECRET;

const ids: [typename: string, localId: string][] = [];
/** Small data (as the tests use), so that the heap is about the ids alone. */
const sizes = {
  companies: 600,
  investors: 200,
  persons: 700,
  fundingEvents: 500,
  acquisitions: 400,
  execMoves: 1200,
};
for (const event of generateDataset(1, sizes).fundingEvents as FundingEventRecord[]) {
  ids.push(['FundingEvent', fundingEventNode.localId(event)]);
  if (event.company) ids.push(['Company', companyNode.localId(event.company)]);
  for (const investor of event.investors ?? []) {
    if (investor) ids.push(['Investor', investorNode.localId(investor)]);
  }
}
const globalIds = ids.map(([typename, localId]) => encodeGlobalId(typename, localId, secret));
const hmacKey = createHmac('sha256', secret).update('reference').digest('hex');

const variants: Record<string, (i: number) => unknown> = {
  'write, unsigned (as before)': (i) =>
    Buffer.from(`${ids[i]![0]}:${ids[i]![1]}`).toString('base64url'),
  'write, createHmac signature (reference)': (i) => {
    const text = `${ids[i]![0]}:${ids[i]![1]}`;
    const mac = createHmac('sha256', hmacKey).update(text).digest('base64url').slice(0, 16);
    return `${Buffer.from(text).toString('base64url')}.${mac}`;
  },
  'write, encodeGlobalId (signed)': (i) => encodeGlobalId(ids[i]![0], ids[i]![1], secret),
  'read, decodeNodeId (verified)': (i) => decodeNodeId(globalIds[i]!, secret),
};

/** µs per call of each variant: the median of `ROUNDS` rounds, variants interleaved. */
const rounds = new Map<string, number[]>(Object.keys(variants).map((name) => [name, []]));
const calls = Math.ceil(200_000 / ids.length) * ids.length;
for (let round = 0; round <= ROUNDS; round++) {
  for (const [name, run] of Object.entries(variants)) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) run(i % ids.length);
    // Round 0 warms up.
    if (round > 0) rounds.get(name)!.push(Number(process.hrtime.bigint() - started) / 1e3 / calls);
  }
}
console.log(`${ids.length} ids with hints; µs per id, median of ${ROUNDS} rounds:`);
for (const [name, times] of rounds) {
  const median = times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
  console.log(`  ${name.padEnd(42)} ${median.toFixed(3)}`);
}
