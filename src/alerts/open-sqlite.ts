import { createRequire } from 'node:module';
import type { SqliteDatabase } from './sqlite-database.js';
import { openWasmSqlite } from './wasm-sqlite.js';

const load = createRequire(import.meta.url);

/**
 * No binding loads: not `better-sqlite3` (an optional dependency: it did not install where no
 * prebuilt binary fits and no compiler is at hand), not `node:sqlite` (Node 22.13 and later),
 * and not `node-sqlite3-wasm` (a dependency, all JavaScript and WebAssembly: only a broken
 * install lacks it).
 */
export class NoSqlite extends Error {
  override readonly name = 'NoSqlite';
  constructor(cause: string) {
    super(
      `alerts need SQLite, and none of better-sqlite3, node:sqlite (Node 22.13 and later) and node-sqlite3-wasm loads (${cause.split('\n')[0]}): reinstall the dependencies, set REDIS_URL, or ALERTS=off`,
    );
  }
}

/** An open database, and the binding that opened it (for the log). */
export interface OpenedSqlite {
  database: SqliteDatabase;
  binding: 'better-sqlite3' | 'node:sqlite' | 'node-sqlite3-wasm';
}

/**
 * Opens the SQLite file at `path` (created if missing) with the first binding that loads, each
 * on the same file with the same statements:
 *
 * 1. `better-sqlite3` (12.x, built for the Node it was installed with: a native module's ABI is
 *    the installing Node's);
 * 2. Node's own `node:sqlite` (Node 22.13 and later);
 * 3. `node-sqlite3-wasm` ({@link openWasmSqlite}), which needs nothing but the registry: Node 20
 *    on a machine with no compiler, where no prebuilt `better-sqlite3` could be fetched.
 *
 * Write-ahead logging where the binding has it, and every write is synced before it returns
 * (`synchronous=FULL`), so what a statement wrote survives a crash of the process.
 */
export function openSqlite(path: string): OpenedSqlite {
  let opened: OpenedSqlite;
  try {
    const Database = load('better-sqlite3') as new (file: string) => SqliteDatabase;
    opened = { database: new Database(path), binding: 'better-sqlite3' };
  } catch (bindingError) {
    let builtIn: { DatabaseSync: new (file: string) => SqliteDatabase } | undefined;
    try {
      builtIn = load('node:sqlite') as typeof builtIn;
    } catch {
      // Node 20: the WebAssembly build below.
    }
    if (builtIn) opened = { database: new builtIn.DatabaseSync(path), binding: 'node:sqlite' };
    else {
      try {
        load.resolve('node-sqlite3-wasm');
      } catch {
        throw new NoSqlite((bindingError as Error).message);
      }
      opened = { database: openWasmSqlite(path), binding: 'node-sqlite3-wasm' };
    }
  }
  opened.database.exec(
    'PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;',
  );
  return opened;
}
