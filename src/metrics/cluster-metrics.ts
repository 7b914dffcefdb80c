import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry, type RegistryContentType } from 'prom-client';

const SCRAPE_REQUEST = 'gateway:scrape';
const SCRAPE_RESULT = 'gateway:scrape-result';
/** How long a worker waits for the primary's aggregate (prom-client's own limit is 5 s). */
const SCRAPE_TIMEOUT_MS = 6_000;

interface ScrapeRequest {
  type: typeof SCRAPE_REQUEST;
  id: number;
}

interface ScrapeResult {
  type: typeof SCRAPE_RESULT;
  id: number;
  text?: string;
  error?: string;
}

/**
 * In the primary of a cluster: the registry that sums every worker's metrics
 * (`clusterMetrics()`), which also answers a worker that asks for them on the workers' behalf
 * (a scrape of `/metrics` on the shared port lands on any one worker).
 */
export function serveClusterMetrics(): AggregatorRegistry<RegistryContentType> {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: Partial<ScrapeRequest>) => {
    if (message?.type !== SCRAPE_REQUEST || typeof message.id !== 'number') return;
    const id = message.id;
    const reply = (result: Omit<ScrapeResult, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: SCRAPE_RESULT, id, ...result });
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
    );
  });
  return aggregator;
}

/**
 * In a worker: offers `registry` to the primary's aggregation, and returns the scrape of the whole
 * cluster, which it asks the primary for.
 */
export function joinClusterMetrics(registry: Registry): () => Promise<string> {
  AggregatorRegistry.setRegistries([registry]);
  // Its constructor adds the worker's listener that answers the primary's requests.
  new AggregatorRegistry();
  const pending = new Map<number, (result: ScrapeResult) => void>();
  let nextId = 0;
  process.on('message', (message: Partial<ScrapeResult>) => {
    if (message?.type !== SCRAPE_RESULT || typeof message.id !== 'number') return;
    pending.get(message.id)?.(message as ScrapeResult);
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(
        () => settle({ type: SCRAPE_RESULT, id, error: 'timed out' }),
        SCRAPE_TIMEOUT_MS,
      );
      function settle(result: ScrapeResult) {
        clearTimeout(timer);
        pending.delete(id);
        if (result.text !== undefined) resolve(result.text);
        else reject(new Error(`cluster metrics: ${result.error ?? 'no answer'}`));
      }
      pending.set(id, settle);
      process.send?.({ type: SCRAPE_REQUEST, id } satisfies ScrapeRequest);
    });
}
