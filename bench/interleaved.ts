import { request } from 'undici';
import { cpuTimeMs } from './processes.js';

/** One side of an interleaved A/B: a gateway, its process, and the headers its load sends. */
export interface AbSide {
  url: string;
  pid: number;
  headers: Record<string, string>;
}

/** What an interleaved A/B measured for each side. */
export interface AbResult {
  /** Gateway CPU per request, ms: its CPU time over its own blocks, divided by their requests. */
  cpuMs: number;
  /**
   * Gateway CPU per request over the whole run, ms: from before the first block to after the
   * last, so that work a process defers past its block (a collection, a log flush) is counted.
   */
  spanCpuMs: number;
  /** Its CPU per request in each of its blocks, ms, in order. */
  blockCpuMs: number[];
  /** Mean wall time per request at the concurrency used, ms. */
  latencyMs: number;
}

/** Sends `count` POSTs of `body` to `url`/graphql, `concurrency` at a time; throws on an error. */
export async function load(
  url: string,
  body: string,
  headers: Record<string, string>,
  count: number,
  concurrency: number,
): Promise<void> {
  let sent = 0;
  const worker = async () => {
    while (sent < count) {
      sent++;
      const response = await request(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      const text = await response.body.text();
      if (response.statusCode !== 200 || text.includes('"errors"')) {
        throw new Error(text.slice(0, 300));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/**
 * Blocks of `block` requests go to one side, then the other, in alternating order, `blocks`
 * times each; each side's CPU time (/proc) is read around its own blocks. The machine's drift
 * then falls on both alike, which separate runs cannot give. `onBlock` hears of each block (the
 * sandbox's CPU, say).
 */
export async function interleaved<K extends string>(
  sides: Record<K, AbSide>,
  body: string,
  { blocks, block, concurrency }: { blocks: number; block: number; concurrency: number },
  onBlock?: (run: () => Promise<void>) => Promise<void>,
): Promise<Record<K, AbResult>> {
  const names = Object.keys(sides) as K[];
  const cpu = Object.fromEntries(names.map((name) => [name, 0])) as Record<K, number>;
  const perBlock = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<
    K,
    number[]
  >;
  const startCpu = Object.fromEntries(
    names.map((name) => [name, cpuTimeMs(sides[name].pid)]),
  ) as Record<K, number>;
  const wall = Object.fromEntries(names.map((name) => [name, 0])) as Record<K, number>;
  for (let i = 0; i < blocks; i++) {
    for (const name of i % 2 ? [...names].reverse() : names) {
      const side = sides[name];
      const run = async () => {
        const before = cpuTimeMs(side.pid);
        const started = performance.now();
        await load(side.url, body, side.headers, block, concurrency);
        wall[name] += performance.now() - started;
        const spent = cpuTimeMs(side.pid) - before;
        cpu[name] += spent;
        perBlock[name].push(spent / block);
      };
      await (onBlock ? onBlock(run) : run());
    }
  }
  const requests = blocks * block;
  return Object.fromEntries(
    names.map((name) => [
      name,
      {
        cpuMs: cpu[name] / requests,
        spanCpuMs: (cpuTimeMs(sides[name].pid) - startCpu[name]) / requests,
        blockCpuMs: perBlock[name],
        latencyMs: (wall[name] * concurrency) / requests,
      },
    ]),
  ) as Record<K, AbResult>;
}

/**
 * The median, over the blocks run back to back, of `b`'s CPU per request divided by `a`'s: one
 * block slowed by something else on the machine moves it little, where it moves a ratio of sums.
 */
export function medianBlockRatio(a: AbResult, b: AbResult): number {
  const ratios = a.blockCpuMs
    .map((cpu, i) => (b.blockCpuMs[i] ?? NaN) / cpu)
    .filter(Number.isFinite)
    .sort((x, y) => x - y);
  const middle = ratios.length >> 1;
  return ratios.length % 2 ? ratios[middle]! : (ratios[middle - 1]! + ratios[middle]!) / 2;
}
