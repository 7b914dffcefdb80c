import { spawn } from 'node:child_process';
import { Kind, parse, type OperationDefinitionNode, type ValueNode } from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { docPages, ROOT } from '../../scripts/markdown.js';
import { startSandbox, type NewEvent, type Sandbox } from '../../src/sandbox/index.js';
import { startGateway, type Gateway } from '../helpers/start-stack.js';
import { subscribeSse } from '../helpers/subscribe.js';
import {
  errorCodes,
  examplesOf,
  parseCurl,
  shapeMismatches,
  type Example,
} from './doc-examples.js';

// Every example of the README and the docs, run against what `npm start` serves: the sandbox
// with its default data (seed 42, default sizes) and the gateway with the shipped defaults, but
// POLL_INTERVAL_SECONDS=1 (default 30), so that a subscription's first payload comes within a
// second or two of the event the test adds. The docs write `localhost:4000`; the test's gateway
// listens on a free port, and the examples are sent there.

/** Examples shown, not run (`<!-- not run: reason -->`): change this with the docs, on purpose. */
const NOT_RUN = 1;

const examples = docPages().flatMap(examplesOf);
const run = examples.filter((example) => !example.fence.notRun);
const notRun = examples.filter((example) => example.fence.notRun);

let sandbox: Sandbox;
let gateway: Gateway;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true });
  gateway = await startGateway(sandbox, { config: { pollIntervalSeconds: 1 } });
});
afterAll(async () => {
  await gateway?.close();
  await sandbox?.close();
});
// The events a subscription's example was given are taken out: the next example sees the
// seeded data its answer shows.
afterEach(() => sandbox.reset());

/** The docs' `localhost:4000` replaced by the test's gateway. */
const here = (text: string) => text.replaceAll('localhost:4000', new URL(gateway.origin).host);

/** A GraphQL response, or a subscription's payload. */
type Answer = { data?: unknown; errors?: { extensions?: { code?: unknown } }[] };

/** Checks `answer` against the answer the docs show, else that it has data and no error. */
function expectAnswerOf(example: Example, answer: Answer) {
  if (!example.answer) {
    expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    expect(answer.data).toBeTruthy();
    return;
  }
  const documented = JSON.parse(example.answer.body) as Answer;
  expect(errorCodes(answer), JSON.stringify(answer.errors)).toEqual(errorCodes(documented));
  expect(shapeMismatches(documented, answer)).toEqual([]);
}

/** The events that match a subscription's literal filters, for its list. */
function eventsFor(document: string): NewEvent[] {
  const operation = parse(document).definitions[0] as OperationDefinitionNode;
  const field = operation.selectionSet.selections[0];
  if (field?.kind !== Kind.FIELD) throw new Error('a subscription selects one field');
  const first = (value: ValueNode): string | undefined => {
    if (value.kind === Kind.STRING) return value.value;
    if (value.kind === Kind.LIST) return value.values[0] && first(value.values[0]);
    return undefined;
  };
  const filters = Object.fromEntries(
    (field.arguments ?? [])
      .filter((arg) =>
        ['round', 'roleSeniority', 'moveType', 'paymentType'].includes(arg.name.value),
      )
      .map((arg) => [arg.name.value, first(arg.value)]),
  );
  const kind = {
    fundingEventAdded: 'fundingEvent',
    execMoveAdded: 'execMove',
    acquisitionAdded: 'acquisition',
  }[field.name.value];
  if (!kind) throw new Error(`no events to add for ${field.name.value}`);
  return [{ kind, ...filters } as NewEvent];
}

/** Adds `events` every 300 ms until `done` settles: whatever a subscription waits for comes. */
async function whileAdding<T>(events: NewEvent[], done: Promise<T>): Promise<T> {
  const timer = setInterval(() => sandbox.addEvents(events), 300);
  try {
    return await done;
  } finally {
    clearInterval(timer);
  }
}

async function runGraphql(example: Example): Promise<Answer> {
  const document = example.fence.body;
  if (!/^\s*subscription\b/.test(document)) return gateway.gql(document);
  const subscription = subscribeSse(gateway.url, document, { 'x-api-key': sandbox.keys.demo });
  try {
    const [payload] = await whileAdding(eventsFor(document), subscription.next(1, 15_000));
    return payload!;
  } finally {
    subscription.leave();
  }
}

async function runCurl(example: Example): Promise<Answer> {
  const request = parseCurl(here(example.fence.body));
  const response = await fetch(request.url, {
    method: request.method,
    headers: request.headers,
    body: request.body,
  });
  return (await response.json()) as Answer;
}

/** Runs the block with Node from the repository (its imports resolve there); its last line out. */
async function runScript(example: Example): Promise<Answer> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', here(example.fence.body)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk));
  const timeout = setTimeout(() => child.kill(), 20_000);
  const code = await whileAdding(
    [{ kind: 'fundingEvent', round: 'series_a' }, { kind: 'execMove' }, { kind: 'acquisition' }],
    new Promise<number | null>((resolve) => child.on('close', resolve)),
  );
  clearTimeout(timeout);
  expect(code, err).toBe(0);
  const last = out.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as Answer;
}

const runners = { graphql: runGraphql, curl: runCurl, script: runScript };

describe('the docs examples', () => {
  it('finds them: the README example, and one of each kind', () => {
    expect(run.filter((example) => example.page === 'README.md')).toHaveLength(1);
    for (const kind of ['graphql', 'curl', 'script'] as const) {
      expect(run.some((example) => example.kind === kind)).toBe(true);
    }
  });

  it(`shows ${NOT_RUN} not run, each saying why`, () => {
    expect(notRun).toHaveLength(NOT_RUN);
    for (const example of notRun) expect(example.fence.notRun, example.name).toMatch(/\w{3}/);
  });

  for (const example of run) {
    it(`${example.name} (${example.kind}) answers as the docs show`, async () => {
      expectAnswerOf(example, await runners[example.kind](example));
    });
  }
});
