/**
 * Reading the repository's Markdown: its headings and their anchors as GitHub writes them, its
 * fenced code blocks and its links. The generated tables (`doc-table.ts`) link their "see" titles
 * through it, and the docs test (`test/docs/`) checks the links and runs the examples with it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root directory. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A heading: its level, its text as written, and its anchor. */
export interface Heading {
  readonly level: number;
  readonly text: string;
  readonly anchor: string;
  /** 1-based line number. */
  readonly line: number;
}

/** A fenced code block. */
export interface Fence {
  /** The info string's first word (`graphql`, `sh`, `json`), or '' for none. */
  readonly lang: string;
  /** The block's text, without the fence lines and without the fence's own indentation. */
  readonly body: string;
  /** 1-based line numbers of the opening and closing fence lines. */
  readonly line: number;
  readonly endLine: number;
  /** The reason given by a `<!-- not run: reason -->` comment right before the fence. */
  readonly notRun?: string;
}

/** A link's target as written, and where. */
export interface Link {
  readonly target: string;
  readonly line: number;
}

/** The pages of the documentation (README.md, CONTRIBUTING.md, docs/*.md), repository-relative. */
export function docPages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', 'CONTRIBUTING.md', ...docs].filter((page) => existsSync(join(ROOT, page)));
}

/** Every Markdown file of the repository (not node_modules, dist or scratch output). */
export function markdownFiles(dir = ROOT): string[] {
  const skipped = new Set(['node_modules', 'dist', 'coverage', '.bench-tmp', '.git']);
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (skipped.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...markdownFiles(path));
    else if (entry.name.endsWith('.md')) found.push(relative(ROOT, path));
  }
  return found.sort();
}

/** A repository-relative file's text. */
export const readDoc = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The text a heading or a link shows: inline code, links and emphasis reduced to their text. */
export function plainText(markdown: string): string {
  return markdown
    .replace(/`([^`]*)`/g, '$1')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/\*+/g, '')
    .trim();
}

/**
 * A heading's anchor as GitHub makes it: its text lower-cased, punctuation dropped (but `-` and
 * `_`), each space a `-`.
 */
export function slug(heading: string): string {
  return plainText(heading)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The lines of `markdown` outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): { text: string; line: number }[] {
  const fenced = new Set<number>();
  for (const fence of fences(markdown)) {
    for (let line = fence.line; line <= fence.endLine; line++) fenced.add(line);
  }
  return markdown
    .split('\n')
    .map((text, index) => ({ text, line: index + 1 }))
    .filter(({ line }) => !fenced.has(line));
}

/** The headings of `markdown` (ATX style, `#` to `######`), each anchor unique as on GitHub. */
export function headings(markdown: string): Heading[] {
  const seen = new Map<string, number>();
  const found: Heading[] = [];
  for (const { text, line } of proseLines(markdown)) {
    const match = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(text);
    if (!match) continue;
    const base = slug(match[2]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.push({
      level: match[1]!.length,
      text: match[2]!,
      anchor: count === 0 ? base : `${base}-${count}`,
      line,
    });
  }
  return found;
}

/** The fenced code blocks of `markdown`, in order (fences in list items included). */
export function fences(markdown: string): Fence[] {
  const lines = markdown.split('\n');
  const found: Fence[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( {0,3}|\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, marker, lang] = open;
    let end = i + 1;
    while (end < lines.length) {
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(lines[end]!);
      if (close && close[1]![0] === marker![0] && close[1]!.length >= marker!.length) break;
      end++;
    }
    const body = lines
      .slice(i + 1, end)
      .map((line) => (line.startsWith(indent!) ? line.slice(indent!.length) : line.trimStart()))
      .join('\n');
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const comment =
      before >= 0 ? /^\s*<!--\s*not run:\s*(.*?)\s*-->\s*$/.exec(lines[before]!) : null;
    found.push({
      lang: lang ?? '',
      body,
      line: i + 1,
      endLine: end + 1,
      ...(comment ? { notRun: comment[1] } : {}),
    });
    i = end;
  }
  return found;
}

/** The link targets of `markdown`: inline links and reference definitions, outside code. */
export function links(markdown: string): Link[] {
  const found: Link[] = [];
  const prose = proseLines(markdown)
    .map(({ text, line }) => ({
      text: text.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length)),
      line,
    }))
    .map(({ text, line }) => ({ text: text.replace(/<!--.*?-->/g, ''), line }));
  for (const { text, line } of prose) {
    const definition = /^\s*\[[^\]]+\]:\s*(\S+)/.exec(text);
    if (definition) found.push({ target: definition[1]!, line });
    for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      found.push({ target: match[1]!, line });
    }
  }
  return found;
}

/** Whether `target` leaves the repository (a URL, a mail address). */
export const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

/**
 * A Markdown link to the section titled `title` (a heading's text as written, found once among
 * the documentation's pages), relative to the repository-relative file `from`.
 */
export function sectionLink(title: string, from: string): string {
  const matches = docPages().flatMap((page) =>
    headings(readDoc(page))
      .filter((heading) => plainText(heading.text) === title)
      .map((heading) => ({ page, heading })),
  );
  if (matches.length !== 1) {
    const where = matches.map(({ page, heading }) => `${page}:${heading.line}`).join(', ');
    throw new Error(
      `"${title}" must be the title of one section of ${docPages().join(', ')}; found ${matches.length}${where ? ` (${where})` : ''}`,
    );
  }
  const [{ page, heading }] = matches as [{ page: string; heading: Heading }];
  const path = page === from ? '' : relative(dirname(from), page);
  return `[${title}](${path}#${heading.anchor})`;
}
