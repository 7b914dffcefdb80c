/* global console, URL */
// `npm run build`'s second step: after `tsc` has compiled src/ to dist/, dist/main.js (what
// `npm start` and the Docker image run) becomes one ES module with the code it loads at start,
// ours and its packages', and chunks for what it imports on demand (the sandbox, GraphiQL's page,
// Redis and its queue, tracing). Why: Node resolves, reads and links each of the thousand-odd
// modules it would otherwise load one by one, and that work was most of what the gateway
// allocated while starting (88 MB, against its 28 MB heap) and a third of its old space at rest.
// The rest of dist/ stays as tsc wrote it, for the tools and tests that import single modules.
//
//   node scripts/bundle-main.mjs
import { build } from 'esbuild';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Left to Node at run time: a native addon (better-sqlite3), SQLite's WebAssembly build (which
 * reads its .wasm beside itself), and packages that find files beside
 * their own at run time (pino's worker transports, BullMQ's scripts and its native msgpack, and
 * ioredis and OpenTelemetry's exporters, loaded only when their setting is on).
 */
const EXTERNAL = [
  'better-sqlite3',
  'node-sqlite3-wasm',
  'bullmq',
  'ioredis',
  'pino',
  '@opentelemetry/*',
];

const BANNER =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

// A bundle bundled again would import the chunks removed below.
if (readFileSync(`${ROOT}/dist/main.js`, 'utf8').startsWith(BANNER)) {
  throw new Error('dist/main.js is bundled already: run `npm run build`, which compiles it first');
}

// The chunks of the last build, whose names carry their hashes.
rmSync(`${ROOT}/dist/chunks`, { recursive: true, force: true });

await build({
  absWorkingDir: ROOT,
  entryPoints: ['dist/main.js'],
  outdir: 'dist',
  allowOverwrite: true,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  // CommonJS packages call `require` for Node's own modules; an ES module has none of its own.
  banner: { js: BANNER },
  // No `keepNames`: it would wrap every named function expression in a call that sets its name,
  // at each evaluation, hot closures included (the walk measured 5–14% slower with it).
  // Comments and indentation out: a comment of a package with one character past ASCII (undici's
  // has some) made the whole source a two-byte string, held by V8 for the process's life (9.2 MB
  // at rest instead of 3.6). Names are kept, so stack traces still say which function.
  minifyWhitespace: true,
  // The packages' license comments go to dist/main.js.LEGAL.txt, named at the end of the bundle.
  legalComments: 'linked',
  // Stack traces map back to src/ through tsc's maps, with `node --enable-source-maps`.
  sourcemap: 'linked',
  logLevel: 'warning',
});

console.log('dist/main.js bundled');
