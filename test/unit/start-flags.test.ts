import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startNodeFlags } from '../../scripts/start-flags.mjs';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/**
 * `npm start`'s Node flags (package.json) are written once; every other way the docs give to run
 * the gateway says the same, so that an operator gets what the bench measured.
 */
describe("npm start's Node flags", () => {
  const flags = startNodeFlags();

  it('are read from the start script', () => {
    expect(flags).toContain('--max-semi-space-size=32');
    expect(flags).toContain('--no-allocation-site-pretenuring');
  });

  it("are the Dockerfile's CMD", () => {
    const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'));
    expect(JSON.parse(cmd![1]!)).toEqual(['node', ...flags, 'dist/main.js']);
  });

  it("are the operations guide's production command", () => {
    expect(read('docs/operations.md')).toContain(
      `NODE_ENV=production node ${flags.join(' ')} dist/main.js\n`,
    );
  });
});
