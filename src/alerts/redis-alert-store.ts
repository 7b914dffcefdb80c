import type { Redis } from 'ioredis';
import type { RedisLink } from '../redis/redis-link.js';
import {
  DELIVERIES_KEPT,
  type Alert,
  type AlertStore,
  type Delivery,
  type Page,
  pageCursor,
} from './alert-store.js';
import type { Seal } from './seal.js';

/**
 * Adds a delivery unless it is there, and moves its alert's watermark and spending, in one step.
 * KEYS: delivery, the alert's deliveries, alert, pending. ARGV: id, createdAt, nextAttemptAt,
 * watermark ('' for none), spent, kept, prefix, then the delivery's fields and values.
 * Returns 1 when added, 0 when it was there or its alert is gone.
 */
const ADD_DELIVERY = `
if redis.call('EXISTS', KEYS[3]) == 0 then return 0 end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[3], 'watermark', ARGV[4]) end
redis.call('HSET', KEYS[3], 'spent', ARGV[5])
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local fields = {}
for i = 8, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
local extra = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[6])
if extra > 0 then
  for _, old in ipairs(redis.call('ZRANGE', KEYS[2], 0, extra - 1)) do
    local key = ARGV[7] .. 'delivery:' .. old
    if redis.call('HGET', key, 'status') ~= '"pending"' then
      redis.call('DEL', key)
      redis.call('ZREM', KEYS[2], old)
    end
  end
end
return 1
`;

/** Sets fields of a hash that exists (an alert or delivery deleted meanwhile stays deleted). */
const UPDATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`;

/**
 * Deletes an alert its owner owns, with its deliveries. KEYS: alert, owner's set, all, the
 * alert's deliveries, pending. ARGV: id, owner (JSON), prefix. Returns 1 when deleted.
 */
const DELETE = `
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
for _, id in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
  redis.call('DEL', ARGV[3] .. 'delivery:' .. id)
  redis.call('ZREM', KEYS[5], id)
end
redis.call('DEL', KEYS[4])
return 1
`;

type Fields = Record<string, string>;

/** The items of `sorted` (newest first) after `after`'s cursor, `first` of them. */
function pageOf<T extends { id: string; createdAt: number }>(
  sorted: T[],
  first: number,
  after: string | null,
): Page<T> {
  let start = 0;
  if (after) {
    const [at, id] = Buffer.from(after, 'base64url').toString().split('\n');
    const atMs = Number(at);
    start = sorted.findIndex(
      (item) => item.createdAt < atMs || (item.createdAt === atMs && item.id < (id ?? '')),
    );
    if (start < 0) start = sorted.length;
  }
  const items = sorted.slice(start, start + first);
  const last = items.at(-1);
  return {
    items,
    next: start + first < sorted.length && last ? pageCursor(last) : null,
  };
}

const newestFirst = (a: { createdAt: number; id: string }, b: { createdAt: number; id: string }) =>
  b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * Alerts and deliveries in the shared Redis (`REDIS_URL`), for every instance: each alert and
 * each delivery a hash of JSON fields (a change sets only its fields, so the runner's watermark,
 * the sender's failures and the owner's pause never overwrite each other), an owner's alerts and
 * an alert's deliveries in sorted sets, the pending deliveries in one (the queue's repair reads
 * it). The caller and the secret are sealed (`seal.ts`). An alert keeps its
 * {@link DELIVERIES_KEPT} newest deliveries, and every pending one. What is written is as
 * durable as the Redis is (its own persistence).
 */
export class RedisAlertStore implements AlertStore {
  readonly #link: RedisLink;
  readonly #seal: Seal;
  readonly #prefix: string;

  /** `prefix` names this deployment's keys (`…:alerts:`). */
  constructor(link: RedisLink, seal: Seal, prefix: string) {
    this.#link = link;
    this.#seal = seal;
    this.#prefix = prefix;
  }

  /** Runs on the link: at once `RedisDown` while it is down. */
  #run<T>(command: (redis: Redis) => Promise<T>): Promise<T> {
    return this.#link.run(command);
  }

  #key(...parts: string[]): string {
    return this.#prefix + parts.join(':');
  }

  async create(alert: Alert): Promise<void> {
    await this.#run((redis) =>
      redis
        .multi()
        .hset(this.#key('alert', alert.id), this.#alertFields(alert))
        .zadd(this.#key('owner', alert.owner), alert.createdAt, alert.id)
        .sadd(this.#key('all'), alert.id)
        .exec(),
    );
  }

  async get(owner: string, id: string): Promise<Alert | undefined> {
    const alert = await this.byId(id);
    return alert?.owner === owner ? alert : undefined;
  }

  /** An alert by its id alone, for the runner and the sender (never for a caller). */
  async byId(id: string): Promise<Alert | undefined> {
    const fields = await this.#run((redis) => redis.hgetall(this.#key('alert', id)));
    return this.#alertOf(fields);
  }

  async list(owner: string, first: number, after: string | null): Promise<Page<Alert>> {
    const ids = await this.#run((redis) => redis.zrange(this.#key('owner', owner), 0, -1));
    const alerts = (await this.#many(ids)).sort(newestFirst);
    return pageOf(alerts, first, after);
  }

  async count(owner: string): Promise<number> {
    return this.#run((redis) => redis.zcard(this.#key('owner', owner)));
  }

  async runnable(now: number): Promise<Alert[]> {
    const ids = await this.#run((redis) => redis.smembers(this.#key('all')));
    return (await this.#many(ids)).filter(
      (alert) =>
        alert.status === 'active' && (alert.waitingUntil === null || alert.waitingUntil <= now),
    );
  }

  async update(id: string, change: Partial<Omit<Alert, 'id' | 'owner'>>): Promise<void> {
    const fields = this.#alertFields(change);
    if (Object.keys(fields).length === 0) return;
    await this.#run((redis) =>
      redis.eval(UPDATE, 1, this.#key('alert', id), ...Object.entries(fields).flat()),
    );
  }

  async delete(owner: string, id: string): Promise<boolean> {
    const deleted = await this.#run((redis) =>
      redis.eval(
        DELETE,
        5,
        this.#key('alert', id),
        this.#key('owner', owner),
        this.#key('all'),
        this.#key('deliveries', id),
        this.#key('pending'),
        id,
        JSON.stringify(owner),
        this.#prefix,
      ),
    );
    return deleted === 1;
  }

  async addDelivery(delivery: Delivery, watermark: string | null, spent: number): Promise<boolean> {
    const added = await this.#run((redis) =>
      redis.eval(
        ADD_DELIVERY,
        4,
        this.#key('delivery', delivery.id),
        this.#key('deliveries', delivery.alertId),
        this.#key('alert', delivery.alertId),
        this.#key('pending'),
        delivery.id,
        delivery.createdAt,
        delivery.nextAttemptAt ?? delivery.createdAt,
        watermark === null ? '' : JSON.stringify(watermark),
        JSON.stringify(spent),
        DELIVERIES_KEPT,
        this.#prefix,
        ...Object.entries(deliveryFields(delivery)).flat(),
      ),
    );
    return added === 1;
  }

  async getDelivery(id: string): Promise<Delivery | undefined> {
    return deliveryOf(await this.#run((redis) => redis.hgetall(this.#key('delivery', id))));
  }

  async deliveries(alertId: string, first: number, after: string | null): Promise<Page<Delivery>> {
    const ids = await this.#run((redis) => redis.zrange(this.#key('deliveries', alertId), 0, -1));
    const results = await this.#run(async (redis) => {
      const pipeline = redis.pipeline();
      for (const id of ids) pipeline.hgetall(this.#key('delivery', id));
      return (await pipeline.exec()) ?? [];
    });
    const deliveries = results
      .map(([, fields]) => deliveryOf(fields as Fields))
      .filter((delivery): delivery is Delivery => delivery !== undefined)
      .sort(newestFirst);
    return pageOf(deliveries, first, after);
  }

  async updateDelivery(
    id: string,
    change: Partial<Omit<Delivery, 'id' | 'alertId'>>,
  ): Promise<void> {
    const fields = deliveryFields(change);
    await this.#run((redis) => {
      const multi = redis.multi();
      multi.eval(UPDATE, 1, this.#key('delivery', id), ...Object.entries(fields).flat());
      if (change.status === 'pending') {
        multi.zadd(this.#key('pending'), change.nextAttemptAt ?? Date.now(), id);
      } else if (change.status) {
        multi.zrem(this.#key('pending'), id);
      } else if (change.nextAttemptAt) {
        multi.zadd(this.#key('pending'), 'XX', change.nextAttemptAt, id);
      }
      return multi.exec();
    });
  }

  /** The pending deliveries' ids and when each is due, earliest first, up to `limit`. */
  async pending(limit: number): Promise<{ id: string; at: number }[]> {
    const flat = await this.#run((redis) =>
      redis.zrange(this.#key('pending'), 0, limit - 1, 'WITHSCORES'),
    );
    const due: { id: string; at: number }[] = [];
    for (let i = 0; i < flat.length; i += 2) due.push({ id: flat[i]!, at: Number(flat[i + 1]) });
    return due;
  }

  /** How many deliveries are pending (the queue's depth). */
  depth(): Promise<number> {
    return this.#run((redis) => redis.zcard(this.#key('pending')));
  }

  /** The link's client is the process's: its maker closes it. */
  async close(): Promise<void> {}

  async #many(ids: string[]): Promise<Alert[]> {
    if (ids.length === 0) return [];
    const results = await this.#run(async (redis) => {
      const pipeline = redis.pipeline();
      for (const id of ids) pipeline.hgetall(this.#key('alert', id));
      return (await pipeline.exec()) ?? [];
    });
    // An alert sealed under another `CURSOR_SECRET` does not open: it stays unrun, unlisted.
    return results.flatMap(([, fields]) => {
      try {
        return this.#alertOf(fields as Fields) ?? [];
      } catch {
        return [];
      }
    });
  }

  #alertFields(alert: Partial<Alert>): Fields {
    const fields: Fields = {};
    for (const [name, value] of Object.entries(alert)) {
      if (value === undefined) continue;
      if (name === 'caller') fields[name] = JSON.stringify(this.#seal.seal(JSON.stringify(value)));
      else if (name === 'secret') fields[name] = JSON.stringify(this.#seal.seal(value as string));
      else fields[name] = JSON.stringify(value);
    }
    return fields;
  }

  #alertOf(fields: Fields): Alert | undefined {
    if (!fields['id']) return undefined;
    const value = parsed(fields) as unknown as Alert & { caller: string; secret: string };
    return {
      ...value,
      caller: JSON.parse(this.#seal.open(value.caller)) as Alert['caller'],
      secret: this.#seal.open(value.secret),
    };
  }
}

function deliveryFields(delivery: Partial<Delivery>): Fields {
  const fields: Fields = {};
  for (const [name, value] of Object.entries(delivery)) {
    if (value !== undefined) fields[name] = JSON.stringify(value);
  }
  return fields;
}

function deliveryOf(fields: Fields): Delivery | undefined {
  if (!fields['id']) return undefined;
  return parsed(fields) as unknown as Delivery;
}

function parsed(fields: Fields): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields).map(([name, value]) => [name, JSON.parse(value) as unknown]),
  );
}
