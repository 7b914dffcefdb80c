import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { TallyCounter, TallyHistogram } from '../../src/metrics/tallies.js';

const BUCKETS = [0.001, 0.01, 0.1, 1];
/** On, between and past the bounds: a value on a bound counts in that bucket, as in Prometheus. */
const SAMPLES: [number, string, string][] = [
  [0.0005, 'companies', '2xx'],
  [0.001, 'companies', '2xx'],
  [0.05, 'companies', '5xx'],
  [0.1, 'investors', '2xx'],
  [3, 'investors', '2xx'],
  [1, 'companies', '2xx'],
];

/** The same samples in prom-client's own metrics, and in tallies, each on a registry. */
function both() {
  const own = new Registry();
  const counter = new Counter({
    name: 'c_total',
    help: 'c',
    labelNames: ['endpoint', 'status'],
    registers: [own],
  });
  const histogram = new Histogram({
    name: 'h_seconds',
    help: 'h',
    labelNames: ['endpoint'],
    buckets: BUCKETS,
    registers: [own],
  });
  const tallied = new Registry();
  const tallyCounter = new TallyCounter('c_total', 'c', ['endpoint', 'status'], [tallied]);
  const tallyHistogram = new TallyHistogram('h_seconds', 'h', ['endpoint'], BUCKETS, [tallied]);
  for (const [x, endpoint, status] of SAMPLES) {
    counter.inc({ endpoint, status }, 2);
    histogram.observe({ endpoint }, x);
    tallyCounter.inc(2, endpoint, status);
    tallyHistogram.observe(x, endpoint);
  }
  return { own, tallied };
}

describe('tallies', () => {
  it("expose what prom-client's own counter and histogram expose for the same samples", async () => {
    const { own, tallied } = both();
    const text = await tallied.metrics();
    expect(text).toBe(await own.metrics());
    expect(text).toContain('h_seconds_bucket{le="0.001",endpoint="companies"} 2');
    expect(text).toContain('h_seconds_bucket{le="+Inf",endpoint="investors"} 2');
    expect(text).toContain('h_seconds_bucket{le="1",endpoint="investors"} 1');
    expect(text).toContain('c_total{endpoint="companies",status="2xx"} 6');
  });

  it("add up across a cluster's workers as prom-client's own do", async () => {
    const [a, b] = [both(), both()];
    const own = AggregatorRegistry.aggregate([
      await a.own.getMetricsAsJSON(),
      await b.own.getMetricsAsJSON(),
    ]);
    const tallied = AggregatorRegistry.aggregate([
      await a.tallied.getMetricsAsJSON(),
      await b.tallied.getMetricsAsJSON(),
    ]);
    expect(await tallied.metrics()).toBe(await own.metrics());
    expect(await tallied.metrics()).toContain('c_total{endpoint="companies",status="2xx"} 12');
  });

  it('start again from nothing when the registry resets them', async () => {
    const { tallied } = both();
    tallied.resetMetrics();
    expect(await tallied.metrics()).toBe(
      '# HELP c_total c\n# TYPE c_total counter\n\n# HELP h_seconds h\n# TYPE h_seconds histogram\n',
    );
  });

  it('refuse a label set of the wrong length', () => {
    const counter = new TallyCounter('x_total', 'x', ['endpoint', 'status'], []);
    expect(() => counter.inc(1, 'companies')).toThrow(/x_total: 2 label values expected/);
  });
});
