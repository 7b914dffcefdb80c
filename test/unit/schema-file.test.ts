import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCHEMA_FILES } from '../../scripts/schema-file.js';

describe.each(SCHEMA_FILES)('$name', (file) => {
  it('is the SDL printed from the code (run `npm run schema:print` after a change)', () => {
    const text = readFileSync(new URL(`../../${file.name}`, import.meta.url), 'utf8');
    expect(text).toBe(file.print());
  });
});
