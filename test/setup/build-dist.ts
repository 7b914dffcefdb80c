import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Vitest's global setup: builds `dist/` as `npm start` does (`tsc -p tsconfig.build.json`, then
 * `scripts/bundle-main.mjs`; about 7 s), so that the suites that start `node dist/main.js` run the
 * code under test, bundled as users run it, never a stale build.
 */
export default function buildDist(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  execFileSync(process.execPath, ['scripts/bundle-main.mjs'], { cwd: ROOT, stdio: 'inherit' });
}
