/* global process */
// For `node --import <this file>`: writes to the file named by RECORD_IMPORTS_TO every module the
// process loads, one URL or path a line: each module the ES loader resolves (through the hooks in
// record-imports-hooks.mjs, as it resolves them), and at exit every CommonJS module in
// `require.cache` (a CommonJS package's own `require`s do not pass the ES hooks on Node 20).
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';

const file = process.env.RECORD_IMPORTS_TO;
if (file) {
  register('./record-imports-hooks.mjs', import.meta.url, { data: { file } });
  const { cache } = createRequire(import.meta.url);
  process.on('exit', () => appendFileSync(file, Object.keys(cache).join('\n') + '\n'));
}
