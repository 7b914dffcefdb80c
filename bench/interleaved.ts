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
  /** Gateway CPU per request, ms. */
  cpuMs: number;
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
  const wall = Object.fromEntries(names.map((name) => [name, 0])) as Record<K, number>;
  for (let i = 0; i < blocks; i++) {
    for (const name of i % 2 ? [...names].reverse() : names) {
      const side = sides[name];
      const run = async () => {
        const before = cpuTimeMs(side.pid);
        const started = performance.now();
        await load(side.url, body, side.headers, block, concurrency);
        wall[name] += performance.now() - started;
        cpu[name] += cpuTimeMs(side.pid) - before;
      };
      await (onBlock ? onBlock(run) : run());
    }
  }
  const requests = blocks * block;
  return Object.fromEntries(
    names.map((name) => [
      name,
      { cpuMs: cpu[name] / requests, latencyMs: (wall[name] * concurrency) / requests },
    ]),
  ) as Record<K, AbResult>;
}
