import { fences, readDoc, type Fence } from '../../scripts/markdown.js';

/**
 * How an example runs: a GraphQL document sent to the gateway, a curl command replayed, or a
 * JavaScript program run by Node from the repository.
 */
export type ExampleKind = 'graphql' | 'curl' | 'script';

/** A block of the docs that runs against the sandbox, and the answer shown right after it. */
export interface Example {
  readonly page: string;
  readonly kind: ExampleKind;
  readonly fence: Fence;
  /** The ```json block right after it (nothing but blank lines between): its answer. */
  readonly answer?: Fence;
  /** Where it is, for test names: `docs/clients.md:120`. */
  readonly name: string;
}

/** What a fence is, as an example; undefined for a block that is shown, not run. */
function kindOf(fence: Fence): ExampleKind | 'typescript' | undefined {
  if (fence.lang === 'graphql') return 'graphql';
  if (['sh', 'bash', 'shell'].includes(fence.lang) && /(^|\s)curl\s/.test(fence.body)) {
    return 'curl';
  }
  if (['js', 'javascript', 'mjs'].includes(fence.lang)) return 'script';
  if (['ts', 'typescript'].includes(fence.lang)) return 'typescript';
  return undefined;
}

/** The examples of `page`, in order. A ```ts block must be marked not run (Node runs JS). */
export function examplesOf(page: string): Example[] {
  const text = readDoc(page);
  const lines = text.split('\n');
  const blocks = fences(text);
  return blocks.flatMap((fence, index): Example[] => {
    const kind = kindOf(fence);
    if (!kind) return [];
    const name = `${page}:${fence.line}`;
    if (kind === 'typescript' && !fence.notRun) {
      throw new Error(
        `${name}: a \`\`\`ts block runs only as \`\`\`js (Node runs it as written), or says why not with <!-- not run: reason -->`,
      );
    }
    const next = blocks[index + 1];
    const between = next ? lines.slice(fence.endLine, next.line - 1) : [];
    const answer =
      next?.lang === 'json' && between.every((line) => line.trim() === '') ? next : undefined;
    return [
      {
        page,
        kind: kind === 'typescript' ? 'script' : kind,
        fence,
        name,
        ...(answer ? { answer } : {}),
      },
    ];
  });
}

/** The words of a shell command as sh splits them: quotes, backslashes, line continuations. */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  let word = '';
  let started = false;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unterminated ' in ${command}`);
      word += command.slice(i + 1, end);
      i = end;
      started = true;
    } else if (c === '"') {
      i++;
      while (i < command.length && command[i] !== '"') {
        if (command[i] === '\\' && '"\\$`'.includes(command[i + 1] ?? '')) i++;
        word += command[i];
        i++;
      }
      started = true;
    } else if (c === '\\') {
      if (command[i + 1] !== '\n') {
        word += command[i + 1] ?? '';
        started = true;
      }
      i++;
    } else if (c === '#' && !started) {
      while (i < command.length && command[i] !== '\n') i++;
    } else if (/\s/.test(c)) {
      if (started) words.push(word);
      word = '';
      started = false;
    } else {
      word += c;
      started = true;
    }
  }
  if (started) words.push(word);
  return words;
}

/** A curl command's request: URL, method, headers and body. */
export interface CurlRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/** Reads one `curl` command (the flags the docs use: -s, -H, -d, -X). */
export function parseCurl(command: string): CurlRequest {
  const words = shellWords(command);
  if (words[0] !== 'curl') throw new Error(`not one curl command: ${command}`);
  const request: CurlRequest = { url: '', method: 'GET', headers: {} };
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!;
    const value = () => {
      const next = words[++i];
      if (next === undefined) throw new Error(`${word} without a value in ${command}`);
      return next;
    };
    if (word === '-s' || word === '--silent') continue;
    if (word === '-H' || word === '--header') {
      const header = value();
      const colon = header.indexOf(':');
      request.headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
    } else if (word === '-d' || word === '--data' || word === '--data-raw') {
      request.body = value();
      if (request.method === 'GET') request.method = 'POST';
    } else if (word === '-X' || word === '--request') {
      request.method = value();
    } else if (word.startsWith('-')) {
      throw new Error(`curl flag ${word} is not one the docs test replays (-s, -H, -d, -X)`);
    } else {
      request.url = /^[a-z]+:\/\//.test(word) ? word : `http://${word}`;
    }
  }
  if (!request.url) throw new Error(`no URL in ${command}`);
  return request;
}

/**
 * Where `actual` does not have the shape of `documented`: every key the docs show must be there,
 * with a value of the same JSON type (a documented null admits any), and every list the docs
 * show items of must have items, each of the shape of the item shown at its place.
 */
export function shapeMismatches(documented: unknown, actual: unknown, path = '$'): string[] {
  if (documented === null) return [];
  if (Array.isArray(documented)) {
    if (!Array.isArray(actual)) return [`${path}: a list in the docs, ${typeOf(actual)} here`];
    if (documented.length > 0 && actual.length === 0) {
      return [`${path}: the docs show items, none here`];
    }
    return documented.flatMap((item, i) =>
      i < actual.length ? shapeMismatches(item, actual[i], `${path}[${i}]`) : [],
    );
  }
  if (typeof documented === 'object') {
    if (typeOf(actual) !== 'object')
      return [`${path}: an object in the docs, ${typeOf(actual)} here`];
    const object = actual as Record<string, unknown>;
    return Object.entries(documented).flatMap(([key, value]) =>
      key in object
        ? shapeMismatches(value, object[key], `${path}.${key}`)
        : [`${path}.${key}: in the docs, missing here`],
    );
  }
  return typeOf(documented) === typeOf(actual)
    ? []
    : [`${path}: ${typeOf(documented)} in the docs, ${typeOf(actual)} here`];
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  return typeof value;
}

/** The `extensions.code` of each error of a GraphQL response, in order. */
export function errorCodes(response: { errors?: { extensions?: { code?: unknown } }[] }) {
  return (response.errors ?? []).map((error) => error.extensions?.code);
}
