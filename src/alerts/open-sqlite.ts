import { createRequire } from 'node:module';

/** A prepared statement, as both bindings offer it. */
export interface Statement {
  run(...params: unknown[]): { changes: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

/** The part of a SQLite binding the alerts use. */
export interface SqliteDatabase {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}

const load = createRequire(import.meta.url);

/**
 * Neither binding loads: `better-sqlite3` (an optional dependency: it did not install where no
 * prebuilt binary fits and no compiler is at hand) and this Node has no `node:sqlite` (Node 20).
 */
export class NoSqlite extends Error {
  override readonly name = 'NoSqlite';
  constructor(cause: string) {
    super(
      `alerts need SQLite, and neither better-sqlite3 (${cause.split('\n')[0]}) nor node:sqlite (Node 22.13 and later) loads: run Node 22 or later, install better-sqlite3's build tools, set REDIS_URL, or ALERTS=off`,
    );
  }
}

/**
 * Opens the SQLite file at `path` (created if missing) with `better-sqlite3` (12.x, built for the
 * Node it was installed with); on a Node it was not built for (a native module's ABI is the
 * installing Node's), with Node's own `node:sqlite` (Node 22.13 and later) instead: the same
 * file, the same statements. Write-ahead logging, and every write is synced before it returns
 * (`synchronous=FULL`), so what a statement wrote survives a crash of the process.
 */
export function openSqlite(path: string): SqliteDatabase {
  let database: SqliteDatabase;
  try {
    const Database = load('better-sqlite3') as new (file: string) => SqliteDatabase;
    database = new Database(path);
  } catch (bindingError) {
    let builtIn: { DatabaseSync: new (file: string) => SqliteDatabase };
    try {
      builtIn = load('node:sqlite') as typeof builtIn;
    } catch {
      throw new NoSqlite((bindingError as Error).message);
    }
    database = new builtIn.DatabaseSync(path);
  }
  database.exec(
    'PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;',
  );
  return database;
}
