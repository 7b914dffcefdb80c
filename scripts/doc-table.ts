/**
 * A table of the docs made from the code, kept in one page between `<!-- NAME:start -->` and
 * `<!-- NAME:end -->`. A script that declares one prints it, writes it into its page (`--write`)
 * or exits 1 when the page's copy is stale (`--check`, which CI runs).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as prettier from 'prettier';
import { ROOT, sectionLink } from './markdown.js';

/** One generated table of the docs. */
export interface DocTable {
  /** The page that holds it, repository-relative, e.g. `docs/operations.md`. */
  file: string;
  /** The markers' NAME, e.g. `config-table`. */
  marker: string;
  /** What it is, for messages, e.g. `configuration table`. */
  title: string;
  /** The command that writes it, e.g. `npm run config:table`. */
  command: string;
  /** The column headings. */
  columns: string[];
  /**
   * The rows, each a cell per column, in markdown. `see(title)` links the section of the docs
   * titled so, wherever it is, from the table's page: the code names a section, never a page.
   */
  rows(see: (title: string) => string): string[][];
}

/** The table's page, as an absolute path. */
export const pathOf = (table: DocTable) => join(ROOT, table.file);

/** A cell's markdown, its pipes escaped. */
const cell = (text: string) => text.replaceAll('|', '\\|');

/** The markdown table, as prettier formats its page. */
export async function renderTable(table: DocTable): Promise<string> {
  const line = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;
  const see = (title: string) => sectionLink(title, table.file);
  const markdown = [
    line(table.columns),
    line(table.columns.map(() => '-')),
    ...table.rows(see).map(line),
  ].join('\n');
  const options = await prettier.resolveConfig(pathOf(table));
  return prettier.format(markdown, { ...options, parser: 'markdown' });
}

/** The table `page` (the text of the table's page) holds between the table's markers. */
export function tableIn(page: string, table: DocTable): string {
  const [from, to] = markers(page, table);
  return `${page.slice(from, to).trim()}\n`;
}

function markers(page: string, table: DocTable): [number, number] {
  const start = `<!-- ${table.marker}:start -->`;
  const end = `<!-- ${table.marker}:end -->`;
  const from = page.indexOf(start);
  const to = page.indexOf(end);
  if (from < 0 || to < from) {
    throw new Error(`${table.file} needs ${start} and ${end} around the ${table.title}`);
  }
  return [from + start.length, to];
}

/** The command line of a table's script: print it, `--write` it, or `--check` its page's copy. */
export async function runTableCommand(table: DocTable, argv = process.argv): Promise<void> {
  const rendered = await renderTable(table);
  const page = readFileSync(pathOf(table), 'utf8');
  if (argv.includes('--check')) {
    if (tableIn(page, table) !== rendered) {
      console.error(`${table.file}'s ${table.title} is stale: run \`${table.command}\``);
      process.exit(1);
    }
    console.log(`${table.file}'s ${table.title} is up to date`);
  } else if (argv.includes('--write')) {
    const [from, to] = markers(page, table);
    writeFileSync(pathOf(table), `${page.slice(0, from)}\n\n${rendered}\n${page.slice(to)}`);
    console.log(`wrote the ${table.title} to ${table.file}`);
  } else {
    process.stdout.write(rendered);
  }
}
