import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openWasmSqlite, STALE_LOCK_MS } from '../../src/alerts/wasm-sqlite.js';

const MODULE = fileURLToPath(new URL('../../src/alerts/wasm-sqlite.ts', import.meta.url));

function freshFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'wasm-sqlite-')), 'alerts.sqlite');
}

/** Makes `<path>.lock` as a holder would, `ageMs` ago. */
function leaveLock(path: string, ageMs: number) {
  mkdirSync(`${path}.lock`);
  const then = new Date(Date.now() - ageMs);
  utimesSync(`${path}.lock`, then, then);
}

describe("SQLite's WebAssembly build", () => {
  it('runs, gets and lists as the native bindings do (no row: undefined)', () => {
    const db = openWasmSqlite(freshFile());
    db.exec('CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER)');
    expect(db.prepare('INSERT INTO t VALUES (?, ?)').run('a', 1).changes).toBe(1);
    db.prepare('INSERT INTO t VALUES (?, ?)').run('b', 2);
    expect(db.prepare('SELECT * FROM t WHERE id = ?').get('b')).toEqual({ id: 'b', n: 2 });
    expect(db.prepare('SELECT * FROM t WHERE id = ?').get('z')).toBeUndefined();
    expect(db.prepare('SELECT id FROM t ORDER BY id').all()).toEqual([{ id: 'a' }, { id: 'b' }]);
    expect(db.prepare('UPDATE t SET n = n + 1').run().changes).toBe(2);
    db.close();
  });

  it('does not break the lock of a live holder: the statement is refused as locked', () => {
    const path = freshFile();
    const holder = openWasmSqlite(path);
    holder.exec('CREATE TABLE t (n INTEGER)');
    const other = openWasmSqlite(path);
    other.exec('PRAGMA busy_timeout = 100');
    holder.exec('BEGIN IMMEDIATE');
    holder.prepare('INSERT INTO t VALUES (1)').run();
    expect(() => other.prepare('INSERT INTO t VALUES (2)').run()).toThrow(/database is locked/);
    expect(existsSync(`${path}.lock`)).toBe(true);
    holder.exec('COMMIT');
    other.prepare('INSERT INTO t VALUES (2)').run();
    expect(holder.prepare('SELECT n FROM t ORDER BY n').all()).toEqual([{ n: 1 }, { n: 2 }]);
    holder.close();
    other.close();
  });

  it('breaks a stale lock met by a statement, and runs it', () => {
    const path = freshFile();
    const db = openWasmSqlite(path);
    db.exec('CREATE TABLE t (n INTEGER); PRAGMA busy_timeout = 100');
    leaveLock(path, STALE_LOCK_MS + 1_000);
    db.prepare('INSERT INTO t VALUES (1)').run();
    expect(db.prepare('SELECT count(*) AS c FROM t').get()).toEqual({ c: 1 });
    expect(existsSync(`${path}.lock`)).toBe(false);
    db.close();
  });

  it('after a process is killed inside a transaction: opens once its lock is stale, and rolls the transaction back', async () => {
    const path = freshFile();
    // The child commits one row, then is killed with a second one written, uncommitted.
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `const { openWasmSqlite } = await import(${JSON.stringify(MODULE)});
         const db = openWasmSqlite(${JSON.stringify(path)});
         db.exec('CREATE TABLE t (n INTEGER)');
         db.prepare('INSERT INTO t VALUES (1)').run();
         db.exec('BEGIN IMMEDIATE');
         db.prepare('INSERT INTO t VALUES (2)').run();
         process.stdout.write('inside\\n');
         setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => chunk.includes('inside') && resolve());
      child.on('exit', () => reject(new Error('the child exited before its transaction')));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('exit', resolve));
    expect(existsSync(`${path}.lock`)).toBe(true);
    expect(existsSync(`${path}-journal`)).toBe(true);
    // As if the restart came most of STALE_LOCK_MS after the crash: opening waits out the rest.
    const age = STALE_LOCK_MS - 500;
    const then = new Date(Date.now() - age);
    utimesSync(`${path}.lock`, then, then);
    const db = openWasmSqlite(path);
    expect(db.prepare('SELECT n FROM t').all()).toEqual([{ n: 1 }]);
    expect(existsSync(`${path}.lock`)).toBe(false);
    db.prepare('INSERT INTO t VALUES (3)').run();
    expect(db.prepare('SELECT n FROM t ORDER BY n').all()).toEqual([{ n: 1 }, { n: 3 }]);
    db.close();
  });
});
