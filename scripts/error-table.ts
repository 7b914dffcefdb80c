/**
 * The error table of docs/clients.md, rendered from the catalogue in src/errors/error-catalogue.ts.
 * Run it to print the table; `--write` puts it in the page between the error-table markers
 * (`npm run errors:table`); `--check` exits 1 when the page's table is stale
 * (`npm run errors:check`).
 */
import { pathToFileURL } from 'node:url';
import { errorCatalogue, type ErrorEntry, type ErrorHttp } from '../src/errors/error-catalogue.js';
import { renderTable, runTableCommand, type DocTable } from './doc-table.js';

/** Every code: its HTTP status, whether to retry, who raises it, when, and its extensions. */
export const errorTable: DocTable = {
  file: 'docs/clients.md',
  marker: 'error-table',
  title: 'error table',
  command: 'npm run errors:table',
  columns: ['`extensions.code`', 'HTTP status', 'retry', 'raised by', 'when', 'extra `extensions`'],
  rows: (see) =>
    Object.entries(errorCatalogue).map(([code, entry]: [string, ErrorEntry]) => [
      `\`${code}\``,
      shownStatus(entry.http, entry.raisedBy.includes('service')),
      entry.retryable ? 'yes' : 'no',
      entry.raisedBy.join(', '),
      entry.see ? `${entry.when}; see ${see(entry.see)}` : entry.when,
      entry.extensions ?? '',
    ]),
};

/** The status; for a code the service raises too, the service's (a field's error, 200) as well. */
function shownStatus(http: ErrorHttp | undefined, service: boolean): string {
  if (!http) return '200';
  const headers = Object.entries(http.headers ?? {}).map(
    ([name, value]) => `\`${name}: ${value}\``,
  );
  return [
    `${http.status}${http.spec ? ' (200 under `application/json`)' : ''}`,
    ...headers.map((header) => `with ${header}`),
    ...(service ? ['from the gateway, 200 from the service'] : []),
  ].join(' ');
}

/** The markdown table of error codes, as prettier formats its page. */
export const renderErrorTable = () => renderTable(errorTable);

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runTableCommand(errorTable);
}
