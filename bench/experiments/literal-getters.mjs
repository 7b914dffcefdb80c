/* global console, gc */
/**
 * Why a connection's page info is a class (issue 39's fourth day): per operation, a payload of
 * 2,000 small objects that only a getter's scope holds, the object holding the getter dropped at
 * once, then a young-generation collection. With the getter in an object literal, V8's scavenger
 * keeps the payload and promotes it (about 7 MB over 50 operations, on Node 20, 22 and 24); with
 * the getter on a class's prototype, or a plain closure in the literal, it does not (under
 * 0.2 MB). The full collection that follows frees it.
 *
 *   node --expose-gc bench/experiments/literal-getters.mjs
 */
import v8 from 'node:v8';

const oldSpaceUsed = () =>
  v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space').space_used_size;

class Info {
  constructor(edges) {
    this.edges = edges;
  }
  get first() {
    return this.edges[0];
  }
}

const shapes = {
  'class getter': (edges) => new Info(edges),
  'literal closure': (edges) => ({ first: () => edges[0] }),
  'literal getter': (edges) => ({
    get first() {
      return edges[0];
    },
  }),
};

function operation(make) {
  const edges = Array.from({ length: 2000 }, (_, i) => ({ i, s: `x${i}` }));
  // Read once, as GraphQL reads a cursor, then dropped.
  const info = make(edges);
  const first = typeof info.first === 'function' ? info.first() : info.first;
  if (first !== edges[0]) throw new Error('the getter answered wrong');
}

for (const [name, make] of Object.entries(shapes)) {
  for (let i = 0; i < 20; i++) operation(make);
  gc();
  const before = oldSpaceUsed();
  for (let i = 0; i < 50; i++) {
    operation(make);
    gc({ type: 'minor' });
  }
  const grown = (oldSpaceUsed() - before) / 1024;
  console.log(`${name.padEnd(16)} old space +${grown.toFixed(0)} KB over 50 operations`);
}
