import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  DELIVERIES_KEPT,
  type Alert,
  type AlertStore,
  type Delivery,
  type Page,
  pageCursor,
} from './alert-store.js';
import { openSqlite, type OpenedSqlite } from './open-sqlite.js';
import type { SqliteDatabase } from './sqlite-database.js';
import type { Seal } from './seal.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS alerts (
  id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  caller TEXT NOT NULL,
  query TEXT NOT NULL,
  operation_name TEXT,
  variables TEXT NOT NULL,
  url TEXT NOT NULL,
  secret TEXT NOT NULL,
  daily_budget INTEGER NOT NULL,
  status TEXT NOT NULL,
  reason TEXT,
  waiting_until INTEGER,
  watermark TEXT,
  spent_day TEXT NOT NULL,
  spent INTEGER NOT NULL,
  failures INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS alerts_by_owner ON alerts (owner, created_at DESC, id DESC);
CREATE TABLE IF NOT EXISTS deliveries (
  id TEXT PRIMARY KEY,
  alert_id TEXT NOT NULL,
  record_id TEXT NOT NULL,
  body TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  last_status INTEGER,
  last_error TEXT,
  next_attempt_at INTEGER,
  delivered_at INTEGER,
  created_at INTEGER NOT NULL,
  discovered_at INTEGER,
  claimed_until INTEGER
);
CREATE INDEX IF NOT EXISTS deliveries_by_alert ON deliveries (alert_id, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (status, next_attempt_at);
CREATE TABLE IF NOT EXISTS run_leases (
  alert_id TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  until INTEGER NOT NULL
);
`;

interface AlertRow {
  id: string;
  owner: string;
  caller: string;
  query: string;
  operation_name: string | null;
  variables: string;
  url: string;
  secret: string;
  daily_budget: number;
  status: Alert['status'];
  reason: string | null;
  waiting_until: number | null;
  watermark: string | null;
  spent_day: string;
  spent: number;
  failures: number;
  created_at: number;
}

interface DeliveryRow {
  id: string;
  alert_id: string;
  record_id: string;
  body: string;
  status: Delivery['status'];
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: number | null;
  delivered_at: number | null;
  created_at: number;
  discovered_at: number | null;
}

/** Column of each alert field, for updates. */
const ALERT_COLUMNS: Record<string, string> = {
  caller: 'caller',
  query: 'query',
  operationName: 'operation_name',
  variables: 'variables',
  url: 'url',
  secret: 'secret',
  dailyBudget: 'daily_budget',
  status: 'status',
  reason: 'reason',
  waitingUntil: 'waiting_until',
  watermark: 'watermark',
  spentDay: 'spent_day',
  spent: 'spent',
  failures: 'failures',
  createdAt: 'created_at',
};

const DELIVERY_COLUMNS: Record<string, string> = {
  recordId: 'record_id',
  body: 'body',
  status: 'status',
  attempts: 'attempts',
  lastStatus: 'last_status',
  lastError: 'last_error',
  nextAttemptAt: 'next_attempt_at',
  deliveredAt: 'delivered_at',
  createdAt: 'created_at',
  discoveredAt: 'discovered_at',
};

function afterOf(after: string | null): [number, string] {
  if (!after) return [Number.MAX_SAFE_INTEGER, ''];
  const [at, id] = Buffer.from(after, 'base64url').toString().split('\n');
  return [Number(at), id ?? ''];
}

/**
 * Alerts and deliveries in an embedded SQLite file (`ALERTS_DATA_DIR`/alerts.sqlite), for one
 * instance: every write is synced before it returns (`openSqlite`), so what was written survives
 * a crash. The caller and the secret of an alert are sealed (`seal.ts`) before they are written.
 * Also the queue of due deliveries: {@link claimDue} hands each pending delivery to one sender
 * for a while; one not settled by then (the process died sending it) is due again.
 */
export class SqliteAlertStore implements AlertStore {
  readonly #db: SqliteDatabase;
  readonly #seal: Seal;
  /** The SQLite binding that opened the file (`openSqlite`). */
  readonly binding: OpenedSqlite['binding'];

  constructor(path: string, seal: Seal) {
    mkdirSync(dirname(path), { recursive: true });
    ({ database: this.#db, binding: this.binding } = openSqlite(path));
    this.#db.exec(SCHEMA);
    this.#seal = seal;
  }

  async create(alert: Alert): Promise<void> {
    this.#db
      .prepare(
        `INSERT INTO alerts (id, owner, caller, query, operation_name, variables, url, secret,
          daily_budget, status, reason, waiting_until, watermark, spent_day, spent, failures, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        alert.id,
        alert.owner,
        this.#seal.seal(JSON.stringify(alert.caller)),
        alert.query,
        alert.operationName,
        JSON.stringify(alert.variables),
        alert.url,
        this.#seal.seal(alert.secret),
        alert.dailyBudget,
        alert.status,
        alert.reason,
        alert.waitingUntil,
        alert.watermark,
        alert.spentDay,
        alert.spent,
        alert.failures,
        alert.createdAt,
      );
  }

  async get(owner: string, id: string): Promise<Alert | undefined> {
    const row = this.#db
      .prepare('SELECT * FROM alerts WHERE id = ? AND owner = ?')
      .get(id, owner) as AlertRow | undefined;
    return row && this.#alertOf(row);
  }

  /** An alert by its id alone, for the runner and the sender (never for a caller). */
  async byId(id: string): Promise<Alert | undefined> {
    const row = this.#db.prepare('SELECT * FROM alerts WHERE id = ?').get(id) as
      AlertRow | undefined;
    return row && this.#alertOf(row);
  }

  async list(owner: string, first: number, after: string | null): Promise<Page<Alert>> {
    return this.#page('alerts', 'owner', owner, first, after, (row: AlertRow) =>
      this.#alertOf(row),
    );
  }

  async count(owner: string): Promise<number> {
    const row = this.#db.prepare('SELECT count(*) AS n FROM alerts WHERE owner = ?').get(owner) as {
      n: number;
    };
    return Number(row.n);
  }

  async runnable(now: number): Promise<Alert[]> {
    const rows = this.#db
      .prepare(
        `SELECT * FROM alerts WHERE status = 'active' AND (waiting_until IS NULL OR waiting_until <= ?)`,
      )
      .all(now) as AlertRow[];
    return rows.flatMap((row) => this.#openable(row));
  }

  async update(id: string, change: Partial<Omit<Alert, 'id' | 'owner'>>): Promise<void> {
    const sets: string[] = [];
    const values: unknown[] = [];
    for (const [field, value] of Object.entries(change)) {
      const column = ALERT_COLUMNS[field];
      if (!column || value === undefined) continue;
      sets.push(`${column} = ?`);
      if (field === 'caller') values.push(this.#seal.seal(JSON.stringify(value)));
      else if (field === 'secret') values.push(this.#seal.seal(value as string));
      else if (field === 'variables') values.push(JSON.stringify(value));
      else values.push(value);
    }
    if (sets.length === 0) return;
    this.#db.prepare(`UPDATE alerts SET ${sets.join(', ')} WHERE id = ?`).run(...values, id);
  }

  async delete(owner: string, id: string): Promise<boolean> {
    const removed = this.#db
      .prepare('DELETE FROM alerts WHERE id = ? AND owner = ?')
      .run(id, owner);
    if (Number(removed.changes) === 0) return false;
    this.#db.prepare('DELETE FROM deliveries WHERE alert_id = ?').run(id);
    this.#db.prepare('DELETE FROM run_leases WHERE alert_id = ?').run(id);
    return true;
  }

  async addDelivery(delivery: Delivery, watermark: string | null, spent: number): Promise<boolean> {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const added = this.#db
        .prepare(
          `INSERT OR IGNORE INTO deliveries (id, alert_id, record_id, body, status, attempts, last_status,
            last_error, next_attempt_at, delivered_at, created_at, discovered_at, claimed_until)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
        )
        .run(
          delivery.id,
          delivery.alertId,
          delivery.recordId,
          delivery.body,
          delivery.status,
          delivery.attempts,
          delivery.lastStatus,
          delivery.lastError,
          delivery.nextAttemptAt,
          delivery.deliveredAt,
          delivery.createdAt,
          delivery.discoveredAt,
        );
      this.#db
        .prepare('UPDATE alerts SET watermark = coalesce(?, watermark), spent = ? WHERE id = ?')
        .run(watermark, spent, delivery.alertId);
      // The log's bound: past the newest DELIVERIES_KEPT, settled deliveries go.
      this.#db
        .prepare(
          `DELETE FROM deliveries WHERE alert_id = ? AND status != 'pending' AND id NOT IN
             (SELECT id FROM deliveries WHERE alert_id = ? ORDER BY created_at DESC, id DESC LIMIT ?)`,
        )
        .run(delivery.alertId, delivery.alertId, DELIVERIES_KEPT);
      this.#db.exec('COMMIT');
      return Number(added.changes) > 0;
    } catch (error) {
      this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  async getDelivery(id: string): Promise<Delivery | undefined> {
    const row = this.#db.prepare('SELECT * FROM deliveries WHERE id = ?').get(id) as
      DeliveryRow | undefined;
    return row && deliveryOf(row);
  }

  async deliveries(alertId: string, first: number, after: string | null): Promise<Page<Delivery>> {
    return this.#page('deliveries', 'alert_id', alertId, first, after, deliveryOf);
  }

  /** A page of `table`'s rows whose `column` is `value`, newest first, after `after`. */
  #page<Row, T extends { createdAt: number; id: string }>(
    table: 'alerts' | 'deliveries',
    column: 'owner' | 'alert_id',
    value: string,
    first: number,
    after: string | null,
    map: (row: Row) => T,
  ): Page<T> {
    const [at, id] = afterOf(after);
    const rows = this.#db
      .prepare(
        `SELECT * FROM ${table} WHERE ${column} = ? AND (created_at < ? OR (created_at = ? AND id < ?))
         ORDER BY created_at DESC, id DESC LIMIT ?`,
      )
      .all(value, at, at, id || '\uffff', first + 1) as Row[];
    const items = rows.slice(0, first).map(map);
    const last = items.at(-1);
    return { items, next: rows.length > first && last ? pageCursor(last) : null };
  }

  async updateDelivery(id: string, change: Partial<Omit<Delivery, 'id' | 'alertId'>>) {
    const sets: string[] = ['claimed_until = NULL'];
    const values: unknown[] = [];
    for (const [field, value] of Object.entries(change)) {
      const column = DELIVERY_COLUMNS[field];
      if (!column || value === undefined) continue;
      sets.push(`${column} = ?`);
      values.push(value);
    }
    this.#db.prepare(`UPDATE deliveries SET ${sets.join(', ')} WHERE id = ?`).run(...values, id);
  }

  /**
   * Hands out up to `limit` pending deliveries due at `now`, each claimed for `leaseMs`: a
   * claim not settled by then (its sender died) makes it due again, with the same id.
   */
  claimDue(now: number, limit: number, leaseMs: number): Delivery[] {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const rows = this.#db
        .prepare(
          `SELECT * FROM deliveries WHERE status = 'pending' AND next_attempt_at <= ?
             AND (claimed_until IS NULL OR claimed_until <= ?)
           ORDER BY next_attempt_at LIMIT ?`,
        )
        .all(now, now, limit) as DeliveryRow[];
      const claim = this.#db.prepare('UPDATE deliveries SET claimed_until = ? WHERE id = ?');
      for (const row of rows) claim.run(now + leaseMs, row.id);
      this.#db.exec('COMMIT');
      return rows.map(deliveryOf);
    } catch (error) {
      this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  /**
   * Takes or renews the lease of `alertId`'s run for `holder` (processes sharing the file,
   * `WORKERS` > 1): true when `holder` holds it now.
   */
  claimRun(alertId: string, holder: string, leaseMs: number): boolean {
    const now = Date.now();
    const taken = this.#db
      .prepare(
        `INSERT INTO run_leases (alert_id, holder, until) VALUES (?, ?, ?)
         ON CONFLICT (alert_id) DO UPDATE SET holder = excluded.holder, until = excluded.until
         WHERE run_leases.holder = excluded.holder OR run_leases.until <= ?`,
      )
      .run(alertId, holder, now + leaseMs, now);
    return Number(taken.changes) > 0;
  }

  /** Pending deliveries (the queue's depth). */
  pending(): number {
    const row = this.#db
      .prepare(`SELECT count(*) AS n FROM deliveries WHERE status = 'pending'`)
      .get() as { n: number };
    return Number(row.n);
  }

  /** The earliest time a pending delivery is due, if any. */
  nextDue(): number | null {
    const row = this.#db
      .prepare(
        `SELECT min(max(next_attempt_at, coalesce(claimed_until, 0))) AS at FROM deliveries WHERE status = 'pending'`,
      )
      .get() as { at: number | null };
    return row.at === null ? null : Number(row.at);
  }

  async close(): Promise<void> {
    this.#db.close();
  }

  /** The alert of `row`, or none when it was sealed under another `CURSOR_SECRET`: it stays unrun. */
  #openable(row: AlertRow): Alert[] {
    try {
      return [this.#alertOf(row)];
    } catch {
      return [];
    }
  }

  #alertOf(row: AlertRow): Alert {
    return {
      id: row.id,
      owner: row.owner,
      caller: JSON.parse(this.#seal.open(row.caller)) as Alert['caller'],
      query: row.query,
      operationName: row.operation_name,
      variables: JSON.parse(row.variables) as Record<string, unknown>,
      url: row.url,
      secret: this.#seal.open(row.secret),
      dailyBudget: Number(row.daily_budget),
      status: row.status,
      reason: row.reason,
      waitingUntil: row.waiting_until === null ? null : Number(row.waiting_until),
      watermark: row.watermark,
      spentDay: row.spent_day,
      spent: Number(row.spent),
      failures: Number(row.failures),
      createdAt: Number(row.created_at),
    };
  }
}

function deliveryOf(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    alertId: row.alert_id,
    recordId: row.record_id,
    body: row.body,
    status: row.status,
    attempts: Number(row.attempts),
    lastStatus: row.last_status === null ? null : Number(row.last_status),
    lastError: row.last_error,
    nextAttemptAt: row.next_attempt_at === null ? null : Number(row.next_attempt_at),
    deliveredAt: row.delivered_at === null ? null : Number(row.delivered_at),
    createdAt: Number(row.created_at),
    discoveredAt: row.discovered_at === null ? null : Number(row.discovered_at),
  };
}
