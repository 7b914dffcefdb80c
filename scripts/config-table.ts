/**
 * The configuration table of docs/operations.md, rendered from `settings` in src/config.ts. Run
 * it to print the table; `--write` puts it in the page between the config-table markers
 * (`npm run config:table`); `--check` exits 1 when the page's table is stale
 * (`npm run config:check`).
 */
import { pathToFileURL } from 'node:url';
import { settings } from '../src/config.js';
import type { Setting } from '../src/config/setting.js';
import { renderTable, runTableCommand, type DocTable } from './doc-table.js';

/** The settings: variable, default, meaning. */
export const configTable: DocTable = {
  file: 'docs/operations.md',
  marker: 'config-table',
  title: 'configuration table',
  command: 'npm run config:table',
  columns: ['variable', 'default', 'meaning'],
  rows: (see) =>
    Object.values(settings).map((s) => [
      `\`${s.env}\``,
      shownDefault(s),
      s.see ? `${s.description}; see ${see(s.see)}` : s.description,
    ]),
};

function shownDefault(s: Setting<unknown>): string {
  // A secret setting unset by default shows that, never a value.
  if (s.secret && s.default !== null) return 'a built-in constant';
  if (s.shownDefault !== undefined) return s.shownDefault;
  if (s.default === null) return '_(unset)_';
  if (Array.isArray(s.default)) {
    return s.default.length > 0 ? `\`${s.default.join(',')}\`` : '_(none)_';
  }
  return `\`${String(s.default)}\``;
}

/** The markdown table of settings, as prettier formats its page. */
export const renderConfigTable = () => renderTable(configTable);

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runTableCommand(configTable);
}
