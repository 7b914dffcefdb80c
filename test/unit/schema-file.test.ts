import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printSchemaFile } from '../../scripts/schema-file.js';

describe('schema.graphql', () => {
  it('is the schema printed from the code (run `npm run schema:print` after a change)', () => {
    const file = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');
    expect(file).toBe(printSchemaFile());
  });
});
