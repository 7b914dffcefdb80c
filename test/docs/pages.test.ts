import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  docPages,
  headings,
  isExternal,
  links,
  markdownFiles,
  readDoc,
  ROOT,
} from '../../scripts/markdown.js';

const files = markdownFiles();

const anchors = new Map<string, Set<string>>();
/** The anchors of a repository-relative Markdown file's headings. */
function anchorsOf(file: string): Set<string> {
  if (!anchors.has(file)) {
    anchors.set(file, new Set(headings(readDoc(file)).map((heading) => heading.anchor)));
  }
  return anchors.get(file)!;
}

/** What is wrong with a link of `file` to `target` (a path, an anchor or both), if anything. */
function brokenLink(file: string, target: string): string | undefined {
  const hash = target.indexOf('#');
  const path = hash < 0 ? target : target.slice(0, hash);
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const resolved = path ? normalize(join(dirname(file), decodeURI(path))) : file;
  if (resolved.startsWith('..')) return 'leaves the repository';
  if (!existsSync(join(ROOT, resolved))) return `no file ${resolved}`;
  if (anchor === undefined) return undefined;
  if (!resolved.endsWith('.md')) return `an anchor into ${resolved}, which has no headings`;
  return anchorsOf(resolved).has(anchor) ? undefined : `no heading of ${resolved} makes #${anchor}`;
}

describe('the docs pages', () => {
  it('are the README, CONTRIBUTING.md and a page per reader under docs/', () => {
    expect(docPages()).toEqual([
      'README.md',
      'CONTRIBUTING.md',
      'docs/architecture.md',
      'docs/clients.md',
      'docs/costs.md',
      'docs/operations.md',
    ]);
  });

  it('keep the README short (at most 150 lines), with no generated table', () => {
    const readme = readDoc('README.md');
    expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(150);
    expect(readme).not.toMatch(/<!-- [\w-]+-table:start -->/);
  });
});

describe('links between the Markdown files', () => {
  it('finds the files', () => {
    expect(files).toEqual(expect.arrayContaining([...docPages(), 'BENCHMARKS.md']));
  });

  it.each(files)('%s: every relative link resolves, anchors included', (file) => {
    const broken = links(readDoc(file))
      .filter((link) => !isExternal(link.target))
      .flatMap((link) => {
        const problem = brokenLink(file, link.target);
        return problem ? [`${file}:${link.line} ${link.target}: ${problem}`] : [];
      });
    expect(broken).toEqual([]);
  });
});
