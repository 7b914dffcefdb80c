/**
 * Prints the schema to schema.graphql (`npm run schema:print`), or with `--check` exits 1 when
 * the file is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { printSchemaFile } from './schema-file.js';

const path = fileURLToPath(new URL('../schema.graphql', import.meta.url));
const printed = printSchemaFile();
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    // a missing file is stale
  }
  if (current !== printed) {
    console.error('schema.graphql is stale: run `npm run schema:print`');
    process.exit(1);
  }
  console.log('schema.graphql is up to date');
} else {
  writeFileSync(path, printed);
  console.log(`wrote ${path}`);
}
