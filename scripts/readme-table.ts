/**
 * A table of README.md made from the code, kept between `<!-- NAME:start -->` and
 * `<!-- NAME:end -->`. A script that declares one prints it, writes it into README.md (`--write`)
 * or exits 1 when README.md's copy is stale (`--check`, which CI runs).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';

/** One generated table of README.md. */
export interface ReadmeTable {
  /** The markers' NAME, e.g. `config-table`. */
  marker: string;
  /** What it is, for messages, e.g. `configuration table`. */
  title: string;
  /** The command that writes it, e.g. `npm run config:table`. */
  command: string;
  /** The column headings. */
  columns: string[];
  /** The rows, each a cell per column, in markdown. */
  rows(): string[][];
}

const readmePath = fileURLToPath(new URL('../README.md', import.meta.url));

/** A cell's markdown, its pipes escaped. */
const cell = (text: string) => text.replaceAll('|', '\\|');

/** The markdown table, as prettier formats README.md. */
export async function renderTable(table: ReadmeTable): Promise<string> {
  const line = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;
  const markdown = [
    line(table.columns),
    line(table.columns.map(() => '-')),
    ...table.rows().map(line),
  ].join('\n');
  const options = await prettier.resolveConfig(readmePath);
  return prettier.format(markdown, { ...options, parser: 'markdown' });
}

/** The table `readme` holds between the table's markers. */
export function tableIn(readme: string, table: ReadmeTable): string {
  const [from, to] = markers(readme, table);
  return `${readme.slice(from, to).trim()}\n`;
}

function markers(readme: string, table: ReadmeTable): [number, number] {
  const start = `<!-- ${table.marker}:start -->`;
  const end = `<!-- ${table.marker}:end -->`;
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from < 0 || to < from) {
    throw new Error(`README.md needs ${start} and ${end} around the ${table.title}`);
  }
  return [from + start.length, to];
}

/** The command line of a table's script: print it, `--write` it, or `--check` README.md's copy. */
export async function runTableCommand(table: ReadmeTable, argv = process.argv): Promise<void> {
  const rendered = await renderTable(table);
  const readme = readFileSync(readmePath, 'utf8');
  if (argv.includes('--check')) {
    if (tableIn(readme, table) !== rendered) {
      console.error(`README.md's ${table.title} is stale: run \`${table.command}\``);
      process.exit(1);
    }
    console.log(`README.md's ${table.title} is up to date`);
  } else if (argv.includes('--write')) {
    const [from, to] = markers(readme, table);
    writeFileSync(readmePath, `${readme.slice(0, from)}\n\n${rendered}\n${readme.slice(to)}`);
    console.log(`wrote the ${table.title} to ${readmePath}`);
  } else {
    process.stdout.write(rendered);
  }
}
