/* global URL */
// The Node flags `npm start` runs the gateway with, read from package.json's `start` script: the
// one place they are written. The bench starts the gateway with them, the production smoke too,
// and test/unit/start-flags.test.ts holds the Dockerfile and docs/operations.md to the same.
import { readFileSync } from 'node:fs';

/** The flags between `node` and `dist/main.js` in package.json's `start` script. */
export function startNodeFlags() {
  const { scripts } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const match = /\bnode((?: --[\w-]+(?:=\S+)?)*) dist\/main\.js/.exec(scripts.start);
  if (!match) throw new Error('package.json: the start script runs no `node … dist/main.js`');
  return match[1].split(' ').filter(Boolean);
}
