/* global process */
/**
 * Loaded with `--import` into a server by bench/experiments/gc-survivors.ts: V8's `GCProfiler`
 * (every collection, with each heap space's size before and after) from SIGUSR2 on; at SIGTERM
 * its record is written to the file `GC_PROFILE_OUT` and the process exits.
 */
import { writeFileSync } from 'node:fs';
import { GCProfiler } from 'node:v8';

let profiler = null;
process.on('SIGUSR2', () => {
  profiler = new GCProfiler();
  profiler.start();
});
process.on('SIGTERM', () => {
  const record = profiler?.stop();
  if (record) writeFileSync(process.env.GC_PROFILE_OUT, JSON.stringify(record));
  process.exit(0);
});
