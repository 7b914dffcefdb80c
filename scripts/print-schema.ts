/**
 * Prints the schema files (schema.graphql, subgraph.graphql; `npm run schema:print`), or with
 * `--check` exits 1 when one is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SCHEMA_FILES } from './schema-file.js';

const check = process.argv.includes('--check');
let stale = false;
for (const file of SCHEMA_FILES) {
  const path = fileURLToPath(new URL(`../${file.name}`, import.meta.url));
  const printed = file.print();
  if (check) {
    let current = '';
    try {
      current = readFileSync(path, 'utf8');
    } catch {
      // a missing file is stale
    }
    if (current !== printed) {
      console.error(`${file.name} is stale: run \`npm run schema:print\``);
      stale = true;
    } else {
      console.log(`${file.name} is up to date`);
    }
  } else {
    writeFileSync(path, printed);
    console.log(`wrote ${path}`);
  }
}
if (stale) process.exit(1);
