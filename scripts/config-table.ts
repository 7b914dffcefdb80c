/**
 * The README's configuration table, rendered from `settings` in src/config.ts. Run it to print the
 * table; `--write` puts it in README.md between the config-table markers (`npm run config:table`);
 * `--check` exits 1 when README.md's table is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as prettier from 'prettier';
import { settings } from '../src/config.js';
import type { Setting } from '../src/config/setting.js';

const readmePath = fileURLToPath(new URL('../README.md', import.meta.url));
const start = '<!-- config-table:start -->';
const end = '<!-- config-table:end -->';

/** The markdown table of settings (variable, default, meaning), as prettier formats README.md. */
export async function renderConfigTable(): Promise<string> {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  const rows = Object.values(settings).map(
    (s) => `| \`${s.env}\` | ${cell(shownDefault(s))} | ${cell(s.description)} |`,
  );
  const markdown = ['| variable | default | meaning |', '| - | - | - |', ...rows].join('\n');
  const options = await prettier.resolveConfig(readmePath);
  return prettier.format(markdown, { ...options, parser: 'markdown' });
}

function shownDefault(s: Setting<unknown>): string {
  if (s.secret) return 'a built-in constant';
  if (s.shownDefault !== undefined) return s.shownDefault;
  if (s.default === null) return '_(unset)_';
  if (Array.isArray(s.default)) {
    return s.default.length > 0 ? `\`${s.default.join(',')}\`` : '_(none)_';
  }
  return `\`${String(s.default)}\``;
}

/** The table `readme` holds between the config-table markers. */
export function readmeConfigTable(readme: string): string {
  const [from, to] = markers(readme);
  return `${readme.slice(from, to).trim()}\n`;
}

function markers(readme: string): [number, number] {
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from < 0 || to < from)
    throw new Error(`README.md needs ${start} and ${end} around the table`);
  return [from + start.length, to];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const table = await renderConfigTable();
  const readme = readFileSync(readmePath, 'utf8');
  if (process.argv.includes('--check')) {
    if (readmeConfigTable(readme) !== table) {
      console.error("README.md's configuration table is stale: run `npm run config:table`");
      process.exit(1);
    }
    console.log("README.md's configuration table is up to date");
  } else if (process.argv.includes('--write')) {
    const [from, to] = markers(readme);
    writeFileSync(readmePath, `${readme.slice(0, from)}\n\n${table}\n${readme.slice(to)}`);
    console.log(`wrote the configuration table to ${readmePath}`);
  } else {
    process.stdout.write(table);
  }
}
