import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The parts of a V8 `.cpuprofile` the summary reads. */
interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  }[];
  /** Microseconds. */
  startTime: number;
  endTime: number;
  samples: number[];
  /** Microseconds since the previous sample (the first since `startTime`). */
  timeDeltas: number[];
}

/** Self time of one function (all its nodes in the call tree together). */
export interface HotSpot {
  name: string;
  /**
   * `path:line:column` of the function in the code V8 ran (for src/ files: tsx's transpiled output),
   * relative to the repo root; node_modules paths start at the package.
   */
  location: string;
  selfMs: number;
  /** Share of the non-idle samples in the window. */
  share: number;
}

/** A profile summary: top functions and the same time grouped by package or file. */
export interface ProfileSummary {
  windowMs: number;
  busyMs: number;
  functions: HotSpot[];
  modules: { module: string; selfMs: number; share: number }[];
}

/**
 * The main-thread profile of process `pid` in `dir`. Node names profiles
 * `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`; thread 0 is the main thread (a loader such
 * as tsx adds a hooks thread with a profile of its own).
 */
export function mainThreadProfile(dir: string, pid: number): string | undefined {
  const name = readdirSync(dir).find((file) =>
    new RegExp(`^CPU\\.\\d+\\.\\d+\\.${pid}\\.0\\.\\d+\\.cpuprofile$`).test(file),
  );
  return name === undefined ? undefined : join(dir, name);
}

function shorten(url: string, root: string): string {
  const path = url.replace(/^file:\/\//, '');
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) return path.slice(modules + '/node_modules/'.length);
  return path.startsWith('/') ? relative(root, path) : path;
}

function moduleOf(location: string): string {
  if (location === '') return '(native / V8)';
  if (location.startsWith('node:')) return 'node: core';
  const parts = location.split('/');
  if (parts[0]?.startsWith('@')) return `${parts[0]}/${parts[1] ?? ''}`;
  if (location.startsWith('src/')) return location.replace(/(:\d+)+$/, '');
  return parts[0] ?? location;
}

const IDLE = new Set(['(idle)', '(program)']);

/**
 * Aggregates the self time of a profile's last `windowMs` (the measured run, not start-up),
 * by function and by module; `(idle)` and `(program)` are left out of the shares.
 */
export function summarizeProfile(
  file: string,
  root: string,
  windowMs: number,
  top = 25,
): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const from = profile.endTime - windowMs * 1000;
  const selfUs = new Map<number, number>();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (t < from) continue;
    // Each sample stands for the time until the next one.
    const next = profile.timeDeltas[i + 1] ?? 0;
    const id = profile.samples[i] as number;
    selfUs.set(id, (selfUs.get(id) ?? 0) + next);
  }
  const functions = new Map<string, HotSpot>();
  const modules = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const name = frame.functionName || '(anonymous)';
    if (IDLE.has(name)) continue;
    busyUs += us;
    const file = shorten(frame.url, root);
    const location = file ? `${file}:${frame.lineNumber + 1}:${frame.columnNumber + 1}` : '';
    const key = `${name} ${location}`;
    const spot = functions.get(key) ?? { name, location, selfMs: 0, share: 0 };
    spot.selfMs += us / 1000;
    functions.set(key, spot);
    const module = moduleOf(file);
    modules.set(module, (modules.get(module) ?? 0) + us / 1000);
  }
  const busyMs = busyUs / 1000;
  const share = (ms: number) => (busyMs > 0 ? ms / busyMs : 0);
  return {
    windowMs,
    busyMs,
    functions: [...functions.values()]
      .map((spot) => ({ ...spot, share: share(spot.selfMs) }))
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, top),
    modules: [...modules.entries()]
      .map(([module, selfMs]) => ({ module, selfMs, share: share(selfMs) }))
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, 15),
  };
}

/** The summary as plain text columns. */
export function formatProfile(summary: ProfileSummary): string {
  const pct = (share: number) => `${(share * 100).toFixed(1).padStart(5)}%`;
  const ms = (value: number) => value.toFixed(0).padStart(7);
  const lines = [
    `CPU profile of the gateway over the last ${(summary.windowMs / 1000).toFixed(1)} s: ${summary.busyMs.toFixed(0)} ms busy (idle excluded)`,
    '',
    `Top ${summary.functions.length} functions by self time:`,
    `${'self ms'.padStart(7)}  ${'share'.padStart(6)}  function  location`,
    ...summary.functions.map(
      (f) => `${ms(f.selfMs)}  ${pct(f.share)}  ${f.name}  ${f.location || '(native)'}`,
    ),
    '',
    'Self time by module:',
    ...summary.modules.map((m) => `${ms(m.selfMs)}  ${pct(m.share)}  ${m.module}`),
  ];
  return lines.join('\n');
}
