import { createRequire } from 'node:module';
import { rmdirSync, statSync } from 'node:fs';
import type { SqliteDatabase, Statement } from './sqlite-database.js';

/** `node-sqlite3-wasm`'s database, as far as it is used here. */
interface WasmDatabase {
  exec(sql: string): void;
  run(sql: string, values: unknown[]): { changes: number };
  get(sql: string, values: unknown[]): unknown;
  all(sql: string, values: unknown[]): unknown[];
  close(): void;
}

/**
 * A lock older than this was left by a process that died holding it. The WebAssembly build's
 * file system layer locks by creating the directory `<file>.lock` and removes it when the
 * statement or transaction ends: a few milliseconds here (every transaction of the store is
 * synchronous), against a busy timeout of 5 s. A process killed inside one leaves it behind.
 */
export const STALE_LOCK_MS = 10_000;

const load = createRequire(import.meta.url);
const pause = new Int32Array(new SharedArrayBuffer(4));

/** How long ago `<path>.lock` was made, or `undefined` when there is none. */
function lockAge(path: string): number | undefined {
  try {
    return Date.now() - statSync(`${path}.lock`).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Removes `<path>.lock` when it is stale; true when it did. */
function breakStaleLock(path: string): boolean {
  const age = lockAge(path);
  if (age === undefined || age < STALE_LOCK_MS) return false;
  try {
    rmdirSync(`${path}.lock`);
  } catch {
    // Another process broke it first, or took it again since: its own now.
  }
  return true;
}

function isLocked(error: unknown): boolean {
  return error instanceof Error && /database is locked/.test(error.message);
}

/**
 * SQLite compiled to WebAssembly (`node-sqlite3-wasm`), for a Node with neither a built
 * `better-sqlite3` nor `node:sqlite`: it installs from the registry alone, no compiler and no
 * prebuilt binary. The same file format and statements as the others; the differences:
 *
 * - The journal is a rollback journal: its file system layer has no shared memory, so the
 *   `journal_mode = WAL` asked for by `openSqlite` stays `delete`. Writes are still synced
 *   (`fsync`) before a statement returns.
 * - Locks are the directory `<file>.lock`, one holder at a time (workers of one gateway still
 *   share the file, in turn). A lock left by a process killed inside a statement is broken once
 *   it is {@link STALE_LOCK_MS} old: opening waits for that (a restart right after a crash), and
 *   a statement refused as locked breaks it and runs again.
 */
export function openWasmSqlite(path: string): SqliteDatabase {
  const { Database } = load('node-sqlite3-wasm') as {
    Database: new (file: string) => WasmDatabase;
  };
  // A restart right after a crash inside a statement: wait until its lock is provably stale.
  // Live holders (other workers) take and drop it in milliseconds: seen free once is enough.
  const giveUp = Date.now() + STALE_LOCK_MS;
  for (let age = lockAge(path); age !== undefined && Date.now() < giveUp; age = lockAge(path)) {
    if (age >= STALE_LOCK_MS) break;
    Atomics.wait(pause, 0, 0, Math.min(250, STALE_LOCK_MS - age));
  }
  breakStaleLock(path);
  const database = new Database(path);
  const locked = <T>(run: () => T): T => {
    try {
      return run();
    } catch (error) {
      // Refused after the busy timeout: by a live holder (the error stands), or by a dead one.
      if (isLocked(error) && breakStaleLock(path)) return run();
      throw error;
    }
  };
  return {
    exec: (sql) => locked(() => database.exec(sql)),
    // The database's own run/get/all prepare and finalize the statement each time: a statement
    // left unfinalized would hold WebAssembly memory that no collector frees.
    prepare: (sql): Statement => ({
      run: (...params) => locked(() => database.run(sql, params)),
      get: (...params) => locked(() => database.get(sql, params) ?? undefined),
      all: (...params) => locked(() => database.all(sql, params)),
    }),
    close: () => database.close(),
  };
}
