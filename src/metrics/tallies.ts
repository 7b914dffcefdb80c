import type { Registry } from 'prom-client';

/**
 * Metrics counted on the hot path (each upstream exchange, each operation) in plain numbers, and
 * exposed by prom-client's `Registry` as any of its own metrics are: in the text format, and as
 * JSON to the cluster's aggregator. prom-client's own `inc` and `observe` validate the labels and
 * build a key string from them at every call; three such calls per upstream exchange cost a walk
 * (21 exchanges) 6–8% of its CPU (BENCHMARKS.md, issue 39). Here a call is a `Map` lookup by the
 * label values, which the caller takes from small sets the gateway defines.
 */

/** Label values as one `Map` key (a label value never holds this character). */
const SEPARATOR = '\u0001';

/** One sample, as prom-client's metrics give theirs: a series of a histogram names itself. */
interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** A metric's samples, as prom-client's `get()` gives them (its `Registry` reads this). */
interface Snapshot {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: Sample[];
}

/** The key of a label set, from its values in the order of the metric's label names. */
function keyOf(values: readonly string[]): string {
  return values.length === 1 ? values[0]! : values.join(SEPARATOR);
}

/** The labels object of `values`, by `names`. */
function labelsOf(names: readonly string[], values: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  names.forEach((name, i) => (labels[name] = values[i]!));
  return labels;
}

/** What prom-client's `Registry` reads of a metric: its name, help, type and values. */
abstract class Tally<V> {
  readonly aggregator = 'sum' as const;
  protected readonly cells = new Map<string, { labels: Record<string, string>; value: V }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    registers: readonly Registry[],
  ) {
    // prom-client's `Registry` takes any object with these members (`registerMetric`).
    for (const registry of registers) registry.registerMetric(this as never);
  }

  /** The cell of a label set, made at its first use. */
  protected cell(values: readonly string[], fresh: () => V): V {
    const key = keyOf(values);
    let cell = this.cells.get(key);
    if (!cell) {
      if (values.length !== this.labelNames.length)
        throw new RangeError(`${this.name}: ${this.labelNames.length} label values expected`);
      cell = { labels: labelsOf(this.labelNames, values), value: fresh() };
      this.cells.set(key, cell);
    }
    return cell.value;
  }

  protected snapshot(values: Sample[]): Snapshot {
    const { name, help, type, aggregator } = this;
    return { name, help, type, aggregator, values };
  }

  abstract readonly type: Snapshot['type'];

  /** Back to no samples (prom-client's `Registry.resetMetrics`). */
  reset(): void {
    this.cells.clear();
  }
}

/** A counter: `inc(n, ...labelValues)`. */
export class TallyCounter extends Tally<{ n: number }> {
  readonly type = 'counter' as const;

  inc(n: number, ...values: string[]): void {
    this.cell(values, () => ({ n: 0 })).n += n;
  }

  get(): Promise<Snapshot> {
    const values = [...this.cells.values()].map(({ labels, value }) => ({
      labels,
      value: value.n,
    }));
    return Promise.resolve(this.snapshot(values));
  }
}

/** A histogram over fixed `buckets` (upper bounds, ascending): `observe(x, ...labelValues)`. */
export class TallyHistogram extends Tally<{ counts: Float64Array; sum: number }> {
  readonly type = 'histogram' as const;
  readonly #buckets: readonly number[];

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
    registers: readonly Registry[],
  ) {
    super(name, help, labelNames, registers);
    this.#buckets = buckets;
  }

  observe(x: number, ...values: string[]): void {
    const buckets = this.#buckets;
    const cell = this.cell(values, () => ({
      counts: new Float64Array(buckets.length + 1),
      sum: 0,
    }));
    let i = 0;
    while (i < buckets.length && x > buckets[i]!) i++;
    // The last count is of the values above every bucket (+Inf's share).
    cell.counts[i]! += 1;
    cell.sum += x;
  }

  get(): Promise<Snapshot> {
    const values: Sample[] = [];
    for (const { labels, value } of this.cells.values()) {
      let cumulative = 0;
      this.#buckets.forEach((le, i) => {
        cumulative += value.counts[i]!;
        values.push({
          metricName: `${this.name}_bucket`,
          labels: { le, ...labels },
          value: cumulative,
        });
      });
      const count = cumulative + value.counts[this.#buckets.length]!;
      values.push(
        { metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...labels }, value: count },
        { metricName: `${this.name}_sum`, labels, value: value.sum },
        { metricName: `${this.name}_count`, labels, value: count },
      );
    }
    return Promise.resolve(this.snapshot(values));
  }
}
