import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';

interface Run {
  child: ChildProcess;
  /** Everything printed so far (stdout and stderr). */
  text(): string;
  waitFor(pattern: RegExp): Promise<string>;
  exited: Promise<number | null>;
}

const runs: Run[] = [];

function run(args: string[]): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/sandbox/main.ts', ...args]);
  let text = '';
  const waiters: (() => void)[] = [];
  const onData = (chunk: Buffer): void => {
    text += chunk.toString();
    for (const wake of waiters.splice(0)) wake();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const waitFor = async (pattern: RegExp): Promise<string> => {
    let done = false;
    void exited.then(() => {
      done = true;
      for (const wake of waiters.splice(0)) wake();
    });
    while (!pattern.test(text)) {
      if (done) throw new Error(`exited without printing ${pattern}:\n${text}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
    return text;
  };
  const result = { child, text: () => text, waitFor, exited };
  runs.push(result);
  return result;
}

afterAll(() => {
  for (const { child } of runs)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

describe('npm run sandbox', () => {
  it('serves on the given port with the given sizes, logs the workspace not the key, stops on SIGTERM', async () => {
    const sandbox = run([
      '--port',
      '0',
      '--seed',
      '3',
      '--companies',
      '40',
      '--investors',
      '5',
      '--persons',
      '5',
    ]);
    const banner = await sandbox.waitFor(/try: curl/);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)?.[1] as string;
    expect(banner).toMatch(/40 companies, 5 investors, 5 persons/);
    const res = await fetch(`${url}/v1/companies?limit=3`, {
      headers: { 'X-API-Key': 'low-credit-key' },
    });
    expect(res.status).toBe(200);
    await sandbox.waitFor(/GET \/v1\/companies\?limit=3 200 3 records .* ws_low_credit/);
    expect(sandbox.text().slice(banner.length)).not.toMatch(/low-credit-key/);
    sandbox.child.kill('SIGTERM');
    expect(await sandbox.exited).toBe(0);
  });

  it('prints help, and rejects bad flags with exit code 2', async () => {
    const help = run(['--help']);
    expect(await help.waitFor(/--funding-events/)).toMatch(/--controls/);
    expect(await help.exited).toBe(0);
    const bad = run(['--port', 'abc']);
    expect(await bad.waitFor(/--port must be a non-negative integer/)).toMatch(/Usage/);
    expect(await bad.exited).toBe(2);
  });

  it('--trickle-seconds adds events the lists serve as they come', async () => {
    const sandbox = run([
      '--port',
      '0',
      '--companies',
      '40',
      '--investors',
      '5',
      '--persons',
      '5',
      '--trickle-seconds',
      '0.05',
    ]);
    const banner = await sandbox.waitFor(/try: curl/);
    expect(banner).toMatch(/trickle: one new event every 0\.05 s/);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)?.[1] as string;
    const text = await sandbox.waitFor(/(trickle: new funding event [\s\S]*){2}/);
    const id = /trickle: new funding event ([0-9a-f-]{36})/.exec(text)?.[1];
    const res = await fetch(
      `${url}/v1/funding-events?limit=100&since=${new Date(Date.now() - 60_000).toISOString()}`,
      {
        headers: { 'X-API-Key': 'demo-key' },
      },
    );
    const body = (await res.json()) as { data: { id: string }[] };
    expect(body.data.map((event) => event.id)).toContain(id);
    sandbox.child.kill('SIGTERM');
    expect(await sandbox.exited).toBe(0);
    const bad = run(['--trickle-seconds', 'often']);
    expect(await bad.waitFor(/--trickle-seconds must be a number of seconds/)).toMatch(/Usage/);
    expect(await bad.exited).toBe(2);
  });
});
