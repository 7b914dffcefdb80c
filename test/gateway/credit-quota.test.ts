import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig, type Config } from '../../src/config.js';
import { encodeGlobalId } from '../../src/nodes/global-id.js';
import { investorNode } from '../../src/nodes/investor-node.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import {
  jwtSettings,
  sign,
  startIdentityProvider,
  type IdentityProvider,
  type SigningKey,
} from '../helpers/identity-provider.js';
import { startRedis, type RedisServer } from '../helpers/start-redis.js';
import {
  NO_CACHE,
  spentOn,
  startGateway,
  startStack,
  type Gateway,
  type Stack,
} from '../helpers/start-stack.js';

/**
 * CREDIT_QUOTA set (unset by default): 1000 credits a day, so that the bucket refills by about
 * 0.01 credit a second and the figures a suite reads stay put while it runs.
 */
const QUOTA: Partial<Config> = { creditQuota: { credits: 1000, windowSeconds: 86_400 } };

/** What a client gets back: status, headers and the GraphQL body. */
interface Answer {
  status: number;
  headers: Headers;
  body: { data?: any; errors?: { message: string; extensions?: any }[]; extensions?: any };
}

/** POSTs `query` to `url` fresh (pages fetched and charged), with `headers` (a key, a token). */
async function post(url: string, query: string, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      ...NO_CACHE,
      ...headers,
    },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** `first` funding rounds: estimated, and charged, at `first` credits. */
const rounds = (first: number) => `{ fundingEvents(first: ${first}) { nodes { uuid } } }`;

const code = (answer: Answer) => answer.body.errors?.[0]?.extensions?.code;
const remaining = (answer: Answer): number => answer.body.extensions.credits.quota.remaining;

/** Credits the sandbox charged `workspace` since its last reset. */
const chargedTo = (sandbox: Sandbox, workspace: string) =>
  sandbox
    .requestLog()
    .filter((entry) => entry.workspace === workspace)
    .reduce((sum, entry) => sum + entry.records, 0);

describe('CREDIT_QUOTA on one instance', () => {
  let stack: Stack;
  let keyCount = 0;
  /** A fresh principal: a key of its own workspace, its own bucket. */
  const newKey = () => {
    const key = `quota-key-${++keyCount}`;
    return {
      key,
      workspace: stack.sandbox.addKey(key, { credits: 1e9 }),
      header: { 'x-api-key': key },
    };
  };

  beforeAll(async () => {
    stack = await startStack({ config: QUOTA });
  });
  afterAll(() => stack?.close());
  beforeEach(() => stack.sandbox.reset());

  it('refuses a principal whose quota is spent, 429 with Retry-After, while another is served', async () => {
    const a = newKey();
    const b = newKey();
    for (let i = 0; i < 2; i++) {
      const ok = await post(stack.url, rounds(400), a.header);
      expect(ok.status).toBe(200);
      expect(ok.body.errors).toBeUndefined();
    }
    const before = spentOn(stack.sandbox).requests;
    const refused = await post(stack.url, rounds(400), { ...a.header, origin: 'https://app.test' });
    expect(refused.status).toBe(429);
    expect(code(refused)).toBe('CREDIT_QUOTA_EXCEEDED');
    const { estimate, available, limit, retryAfter } = refused.body.errors![0]!.extensions;
    expect({ estimate, available, limit }).toEqual({ estimate: 400, available: 200, limit: 1000 });
    // 200 credits missing at 1000 a day: about 17,280 s.
    expect(retryAfter).toBeGreaterThan(17_000);
    expect(retryAfter).toBeLessThanOrEqual(17_280);
    expect(refused.headers.get('retry-after')).toBe(String(retryAfter));
    expect(refused.headers.get('ratelimit-policy')).toBe('"credits";q=1000;w=86400');
    expect(refused.headers.get('ratelimit')).toMatch(/^"credits";r=200;t=\d+$/);
    const exposed = refused.headers.get('access-control-expose-headers')!.toLowerCase();
    expect(exposed.split(/,\s*/)).toEqual(
      expect.arrayContaining(['ratelimit-policy', 'ratelimit', 'retry-after']),
    );
    expect(spentOn(stack.sandbox).requests).toBe(before);

    const other = await post(stack.url, rounds(400), b.header);
    expect(other.status).toBe(200);
    expect(other.body.data.fundingEvents.nodes).toHaveLength(400);
    expect(other.body.extensions.credits.quota).toEqual({
      limit: 1000,
      remaining: 600,
      restoreRate: 1000 / 86_400,
    });
    expect(chargedTo(stack.sandbox, a.workspace)).toBe(800);
    expect(chargedTo(stack.sandbox, b.workspace)).toBe(400);
  });

  it('gives back what an operation reserved and did not charge: an estimate of 50 charging 5 takes 5', async () => {
    const { key, header } = newKey();
    // The fifth-largest round: at least that much matches exactly five (amounts are distinct).
    const amounts = stack.sandbox.data.fundingEvents
      .map((event) => event.amountUsdCents)
      .filter((cents): cents is number => typeof cents === 'number')
      .sort((x, y) => y - x);
    expect(amounts[4]).toBeGreaterThan(amounts[5]!);
    const fiveRounds = `{ fundingEvents(first: 50, minAmountUsd: ${amounts[4]! / 100}) { nodes { uuid } } }`;

    const first = await post(stack.url, rounds(10), header);
    const before = remaining(first);
    expect(before).toBe(990);
    const five = await post(stack.url, fiveRounds, header);
    expect(five.body.data.fundingEvents.nodes).toHaveLength(5);
    expect(five.body.extensions.credits).toMatchObject({ estimate: 50, used: 5 });
    // Settled before the answer went out: 5 taken, not 50 (a little refill may round up).
    expect(remaining(five)).toBeGreaterThanOrEqual(before - 5);
    expect(remaining(five)).toBeLessThanOrEqual(before - 4);
    const next = await post(stack.url, rounds(1), { 'x-api-key': key });
    expect(remaining(next)).toBeGreaterThanOrEqual(before - 6);
    expect(remaining(next)).toBeLessThanOrEqual(before - 5);
  });

  it('20 concurrent operations of one principal never together take more than its bucket', async () => {
    const { workspace, header } = newKey();
    // Twenty different pages of 100 (no operation joins another's fetch): 2000 credits in all.
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(
          stack.url,
          `{ fundingEvents(first: 100, minAmountUsd: ${i}) { nodes { uuid } } }`,
          header,
        ),
      ),
    );
    const admitted = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => code(answer) === 'CREDIT_QUOTA_EXCEEDED');
    expect(admitted).toHaveLength(10);
    expect(refused).toHaveLength(10);
    expect(chargedTo(stack.sandbox, workspace)).toBe(1000);
    expect(spentOn(stack.sandbox).credits).toBe(1000);
  });

  it('says that an estimate above the whole quota can never fit, without Retry-After', async () => {
    const { header } = newKey();
    const query = `{ a: fundingEvents(first: 500) { nodes { uuid } } b: companies(first: 500) { nodes { uuid } } c: investors(first: 500) { nodes { uuid } } }`;
    const answer = await post(stack.url, query, { ...header, 'x-credit-budget': '2000' });
    expect(answer.status).toBe(429);
    expect(code(answer)).toBe('CREDIT_QUOTA_EXCEEDED');
    const error = answer.body.errors![0]!;
    expect(error.message).toMatch(
      /more than your whole quota of 1000 credits per 86400 s: it can never run/,
    );
    expect(error.extensions).toMatchObject({ estimate: 1500, available: 1000, limit: 1000 });
    expect(error.extensions.retryAfter).toBeUndefined();
    expect(answer.headers.get('retry-after')).toBeNull();
    expect(spentOn(stack.sandbox).requests).toBe(0);
  });
});

describe('CREDIT_QUOTA shared through REDIS_URL', () => {
  let redis: RedisServer;
  let stack: Stack;
  let second: Gateway;
  let keyCount = 0;
  const newKey = () => {
    const key = `shared-key-${++keyCount}`;
    stack.sandbox.addKey(key, { credits: 1e9 });
    return { key, header: { 'x-api-key': key } };
  };
  const metric = async (gateway: Gateway, name: string) => {
    const text = await (await fetch(`${gateway.origin}/metrics`)).text();
    return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  };

  beforeAll(async () => {
    redis = await startRedis();
    const config = { ...QUOTA, redisUrl: redis.url };
    stack = await startStack({ config });
    second = await startGateway(stack.sandbox, { config });
  });
  afterAll(async () => {
    await second?.close();
    await stack?.close();
    await redis?.stop();
  });
  beforeEach(() => stack.sandbox.reset());

  it('two instances give a principal one bucket, named in Redis by an HMAC, never by the key, beside the pages', async () => {
    const { key, header } = newKey();
    expect((await post(stack.url, rounds(400), header)).status).toBe(200);
    expect((await post(second.url, rounds(400), header)).status).toBe(200);
    const refusedHere = await post(stack.url, rounds(400), header);
    const refusedThere = await post(second.url, rounds(400), header);
    expect([refusedHere.status, refusedThere.status]).toEqual([429, 429]);
    expect(refusedThere.body.errors![0]!.extensions).toMatchObject({ available: 200 });
    expect(spentOn(stack.sandbox).credits).toBe(800);

    const client = new Redis(redis.url);
    try {
      const names = await client.keys('*quota*');
      expect(names.length).toBeGreaterThan(0);
      for (const name of names) {
        expect(name).toMatch(/^bsg:v2:[\w-]{12}:quota:[\w-]{43}$/);
        expect(name).not.toContain(key);
      }
      // REDIS_URL holds the page cache too (fresh pages are written there).
      expect((await client.keys('bsg:v2:*:page:*')).length).toBeGreaterThan(0);
    } finally {
      client.disconnect();
    }
  });

  it('with Redis stopped, each instance enforces quotas on its own and counts the fallback', async () => {
    const { header } = newKey();
    expect(await metric(stack, 'gateway_quota_fallbacks_total')).toBe(0);
    await redis.stop();
    for (const gateway of [stack, second]) {
      expect((await post(gateway.url, rounds(400), header)).status).toBe(200);
      expect((await post(gateway.url, rounds(400), header)).status).toBe(200);
      const refused = await post(gateway.url, rounds(400), header);
      expect(refused.status).toBe(429);
      expect(refused.body.errors![0]!.extensions).toMatchObject({ available: 200, limit: 1000 });
    }
    expect(spentOn(stack.sandbox).credits).toBe(1600);
    expect(await metric(stack, 'gateway_quota_fallbacks_total')).toBeGreaterThanOrEqual(3);
    expect(await metric(second, 'gateway_quota_fallbacks_total')).toBeGreaterThanOrEqual(3);
    expect(await metric(stack, 'gateway_quota_refusals_total')).toBeGreaterThanOrEqual(1);
  });
});

describe('JWT_QUOTA_CLAIM', () => {
  let idp: IdentityProvider;
  let key: SigningKey;
  let stack: Stack;

  beforeAll(async () => {
    idp = await startIdentityProvider();
    key = await idp.addKey('k1');
    stack = await startStack({
      config: {
        ...QUOTA,
        ...jwtSettings(idp),
        upstreamApiKey: 'server-key',
        jwtQuotaClaim: 'quota',
      },
    });
    stack.sandbox.addKey('server-key', { credits: 1e9 });
  });
  afterAll(async () => {
    await stack?.close();
    await idp?.close();
  });
  beforeEach(() => stack.sandbox.reset());

  const bearer = async (sub: string, claims: Record<string, unknown> = {}) => ({
    authorization: `Bearer ${await sign(key, { sub, claims })}`,
  });

  it("gives a token's principal the quota of its claim, and others CREDIT_QUOTA", async () => {
    const carol = await bearer('carol', { quota: '100/hour' });
    const ok = await post(stack.url, rounds(60), carol);
    expect(ok.status).toBe(200);
    expect(ok.body.extensions.credits.quota).toMatchObject({ limit: 100, restoreRate: 100 / 3600 });
    expect(ok.headers.get('ratelimit-policy')).toBe('"credits";q=100;w=3600');
    const refused = await post(stack.url, rounds(60), carol);
    expect(refused.status).toBe(429);
    expect(refused.body.errors![0]!.extensions).toMatchObject({ estimate: 60, limit: 100 });

    const dave = await post(stack.url, rounds(60), await bearer('dave'));
    expect(dave.status).toBe(200);
    expect(dave.body.extensions.credits.quota).toMatchObject({ limit: 1000, remaining: 940 });
  });

  it('gives each user of each workspace a bucket: alice of acme spends hers, alice of globex is still served', async () => {
    const acme = await bearer('alice', { workspace: 'acme' });
    for (let i = 0; i < 2; i++) expect((await post(stack.url, rounds(400), acme)).status).toBe(200);
    const refused = await post(stack.url, rounds(400), acme);
    expect(refused.status).toBe(429);
    expect(code(refused)).toBe('CREDIT_QUOTA_EXCEEDED');

    const globex = await post(
      stack.url,
      rounds(400),
      await bearer('alice', { workspace: 'globex' }),
    );
    expect(globex.status).toBe(200);
    expect(globex.body.errors).toBeUndefined();
    expect(remaining(globex)).toBe(600);
  });

  it('refuses a token whose quota claim is malformed (401), before anything runs', async () => {
    for (const quota of ['lots', 20_000, '20000/week']) {
      const answer = await post(stack.url, rounds(5), await bearer('erin', { quota }));
      expect(answer.status).toBe(401);
      expect(code(answer)).toBe('UNAUTHENTICATED');
      expect(answer.body.errors![0]!.message).toMatch(
        /"quota" claim \(JWT_QUOTA_CLAIM\) is not a quota/,
      );
    }
    expect(spentOn(stack.sandbox).requests).toBe(0);
  });
});

describe('an operation that costs more than its estimate', () => {
  it('spends no more than its bucket backs: a page beyond the estimate takes more first, or is cut', async () => {
    // A bucket of 2 credits, and a lookup estimated at 1 that costs 3 when it runs to its end.
    const stack = await startStack({
      config: { creditQuota: { credits: 2, windowSeconds: 86_400 } },
    });
    try {
      const workspace = stack.sandbox.addKey('small-bucket', { credits: 1e6 });
      // An investor whose own name's search ranks it second or lower: pages of 1, then 2.
      const { data: investors } = await stack.rest('investors?limit=100');
      let chosen: { id: string; name: string } | undefined;
      for (const investor of investors) {
        const { data: found } = await stack.rest(
          `investors?search=${encodeURIComponent(investor.name)}&limit=100`,
        );
        if (found.findIndex((i: { id: string }) => i.id === investor.id) >= 1) {
          chosen = investor;
          break;
        }
      }
      expect(chosen).toBeDefined();
      stack.sandbox.reset();
      const id = encodeGlobalId(
        'Investor',
        investorNode.localId(chosen!),
        defaultConfig.cursorSecret,
      );
      const answer = await post(stack.url, `{ investor(id: "${id}") { name type } }`, {
        'x-api-key': 'small-bucket',
      });
      expect(answer.body.extensions.credits.estimate).toBe(1);
      expect(code(answer)).toBe('CREDIT_BUDGET_EXHAUSTED');
      // Charged what the bucket held, never past it.
      expect(chargedTo(stack.sandbox, workspace)).toBeLessThanOrEqual(2);
      expect(remaining(answer)).toBeGreaterThanOrEqual(0);
    } finally {
      await stack.close();
    }
  });
});
