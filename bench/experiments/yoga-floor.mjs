/* global process, console, URL */
// Yoga's own floor for a cached answer: a bare Yoga over node:http whose only field returns a
// 20-record list held in memory (no upstream, no plugins of ours), loaded like the bench's
// list-cached scenario. Whatever caches whole answers inside Yoga (its response-cache plugin) runs
// at least this request path, so this CPU and throughput bound what such a cache can reach.
//
//   node bench/experiments/yoga-floor.mjs            (prints req/s and CPU per request at c=1, 32)
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import autocannon from 'autocannon';

if (process.argv[2] === 'serve') {
  const { createYoga, createSchema } = await import('graphql-yoga');
  const rows = Array.from({ length: 20 }, (_, i) => ({
    uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    round: 'series_a',
    amountUsdCents: 1_000_000 * i,
    announcedAt: '2026-01-01T00:00:00.000Z',
    company: { name: `Company ${i}`, domain: `c${i}.example` },
  }));
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: /* GraphQL */ `
        type Company {
          name: String!
          domain: String!
        }
        type Row {
          uuid: ID!
          round: String!
          amountUsdCents: Float!
          announcedAt: String!
          company: Company!
        }
        type Query {
          rows: [Row!]!
        }
      `,
      resolvers: { Query: { rows: () => rows } },
    }),
    logging: false,
    landingPage: false,
    graphiql: false,
  });
  createServer(yoga).listen(0, '127.0.0.1', function () {
    process.send({ port: this.address().port });
  });
} else {
  const child = fork(new URL(import.meta.url).pathname, ['serve'], {
    env: { ...process.env, NODE_ENV: 'production' },
  });
  const { port } = await new Promise((resolve) => child.once('message', resolve));
  const ticks = () => {
    const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  };
  const body = JSON.stringify({
    query: '{ rows { uuid round amountUsdCents announcedAt company { name domain } } }',
  });
  const run = (connections, duration) =>
    autocannon({
      url: `http://127.0.0.1:${port}/graphql`,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
      connections,
      duration,
    });
  await run(8, 2);
  for (const connections of [1, 32]) {
    const before = ticks();
    const result = await run(connections, 6);
    const cpu = (ticks() - before) / result.requests.total;
    console.log(
      `bare Yoga, 20 rows from memory, c=${connections}: ${Math.round(result.requests.average)} req/s, CPU ${cpu.toFixed(3)} ms/req`,
    );
  }
  child.kill();
}
