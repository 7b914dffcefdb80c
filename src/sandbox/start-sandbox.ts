import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createControlRoutes, type SandboxControls } from './control-routes.js';
import { createCursorCodec } from './cursor-codec.js';
import { EventFeed, type EventEndpoints, type LiveEvent } from './event-feed.js';
import { DEFAULT_SIZES, generateDataset, type DatasetSizes } from './dataset/generate-dataset.js';
import type { Dataset } from './dataset/records.js';
import { acquisitionsEndpoint } from './endpoints/acquisitions-endpoint.js';
import { companiesEndpoint } from './endpoints/companies-endpoint.js';
import { execMovesEndpoint } from './endpoints/exec-moves-endpoint.js';
import { fundingEventsEndpoint } from './endpoints/funding-events-endpoint.js';
import { investorsEndpoint } from './endpoints/investors-endpoint.js';
import { FaultInjector, type FaultShares, type Latency } from './faults.js';
import type { ListEndpoint } from './list-endpoint.js';
import { createRequestHandler } from './request-handler.js';
import { RequestLog, type Counters, type RequestLogEntry } from './request-log.js';
import { BUILT_IN_KEYS, Workspaces, type WorkspaceSpec } from './workspaces.js';

/** How to start a sandbox. Every field is optional. */
export interface SandboxOptions {
  /** TCP port; 0 (the default here) picks a free one. The CLI defaults to 4500. */
  port?: number;
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Data seed (default 42). The same seed and sizes give the same data. */
  seed?: number;
  /** Record counts; omitted kinds take the defaults (20,000 companies, 5,000 investors, 20,000 persons, 50,000 funding events, 10,000 acquisitions, 30,000 exec moves). */
  sizes?: Partial<DatasetSizes>;
  /** Delay added before every /v1 answer. */
  latency?: Latency;
  /** No access log on stdout (default false). */
  quiet?: boolean;
  /** Expose the test controls under /__sandbox/ (default false: those paths answer 404). */
  controlsOverHttp?: boolean;
  /**
   * Add one event of a random kind every `everyMs` milliseconds while running (as
   * `addEvents({ kind })` would: discovered now, the newest of its list), so that a client
   * polling with `since` sees new events. Off by default. The timer does not keep the process
   * alive; `close` stops it.
   */
  trickle?: Trickle;
}

/** A steady trickle of new events. */
export interface Trickle {
  /** Milliseconds between two new events (1 to 2^31 - 1). */
  everyMs: number;
}

/** The built-in API keys. */
export interface SandboxKeys {
  /** 10^12 credits, no rate limit. A public key: fine to print. */
  demo: 'demo-key';
  /** 5 credits. */
  lowCredit: string;
  /** 0 credits: PAYMENT_REQUIRED. */
  noCredit: string;
  /** 2 requests per fixed 1-second window. */
  rateLimited: string;
  /** FORBIDDEN by abuse prevention. */
  blocked: string;
}

/** A running sandbox and its test controls. */
export interface Sandbox extends SandboxControls {
  /** Base address without trailing slash, e.g. `http://127.0.0.1:4500`. */
  readonly url: string;
  readonly keys: SandboxKeys;
  /**
   * The records served (read-only): the generated ones, plus the events added since start or
   * the last reset at the end of their lists. A new object after each change.
   */
  readonly data: Dataset;
  /** Every request, oldest first (up to the last 100,000). */
  requestLog(): RequestLogEntry[];
  counters(): Counters;
  /**
   * Clears log and counters, restores credits and rate-limit windows, clears faults, restores
   * start latency, and takes out every added event (the seeded world again; a trickle goes on).
   */
  reset(): void;
  setLatency(latency: Latency): void;
  /** Each share 0..1 of /v1 requests; omitted kinds become 0. */
  setFaults(faults: FaultShares): void;
  /** Adds a key with a fresh workspace; returns the workspace id (as it appears in the request log). */
  addKey(key: string, workspace?: WorkspaceSpec): string;
  /**
   * Revokes a key: its requests get 401 UNAUTHORIZED from now on (`reset` does not bring it
   * back; `addKey` may add it again, with a fresh workspace).
   */
  revokeKey(key: string): void;
  /** Remaining credits of the key's workspace, undefined for an unknown key. */
  credits(key: string): number | undefined;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

/** The five list endpoints over a dataset, keyed by path, and the three event lists among them. */
export function buildEndpoints(data: Dataset): {
  byPath: Map<string, ListEndpoint>;
  events: EventEndpoints;
} {
  const events: EventEndpoints = {
    execMoves: execMovesEndpoint(data.execMoves),
    acquisitions: acquisitionsEndpoint(data.acquisitions),
    fundingEvents: fundingEventsEndpoint(data.fundingEvents),
  };
  const endpoints: ListEndpoint[] = [
    events.execMoves,
    events.acquisitions,
    events.fundingEvents,
    companiesEndpoint(data.companies),
    investorsEndpoint(data.investors),
  ];
  return { byPath: new Map(endpoints.map((endpoint) => [endpoint.path, endpoint])), events };
}

/** The longest delay a Node timer takes (a longer one fires after 1 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

function checkTrickle(trickle: Trickle | undefined): void {
  const ms = trickle?.everyMs;
  if (trickle && !(typeof ms === 'number' && ms >= 1 && ms <= MAX_TIMER_MS)) {
    throw new RangeError(
      `trickle.everyMs must be a number from 1 to ${MAX_TIMER_MS} (got ${String(ms)})`,
    );
  }
}

function describeEvent(event: LiveEvent): string {
  if ('round' in event) return `funding event ${event.id}: ${event.company.name}, ${event.round}`;
  if ('person' in event)
    return `exec move ${event.id}: ${event.person.name}, ${event.moveType} at ${event.company.name}`;
  return `acquisition ${event.id}: ${event.acquirer.name} acquires ${event.target.name}`;
}

/**
 * Generates the data, builds the endpoints and listens. Resolves once the
 * server accepts connections.
 *
 * @throws RangeError for invalid sizes, latency or port.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const seed = options.seed ?? 42;
  if (!Number.isSafeInteger(seed)) throw new RangeError('seed must be an integer');
  checkTrickle(options.trickle);
  const seeded = generateDataset(seed, { ...DEFAULT_SIZES, ...options.sizes });
  const endpoints = buildEndpoints(seeded);
  const feed = new EventFeed(seeded, seed, endpoints.events);
  const quiet = options.quiet ?? false;
  const workspaces = new Workspaces();
  const log = new RequestLog();
  const faults = new FaultInjector(seed, options.latency);
  const controls: SandboxControls = {
    requestLog: () => log.entries(),
    counters: () => log.counters(),
    reset: () => {
      log.clear();
      workspaces.reset();
      faults.reset();
      feed.reset();
    },
    setLatency: (latency) => faults.setLatency(latency),
    setFaults: (shares) => faults.setFaults(shares),
    scriptFaults: (scripted) => faults.script(scripted),
    addEvents: ((events: unknown) => feed.add(events)) as SandboxControls['addEvents'],
  };
  const handler = createRequestHandler({
    endpoints: endpoints.byPath,
    workspaces,
    log,
    faults,
    codec: createCursorCodec(`seed:${seed}`),
    controls: options.controlsOverHttp ? createControlRoutes(controls) : null,
    quiet,
  });
  const server = createServer({ keepAlive: true }, handler);
  server.keepAliveTimeout = 30_000;
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | null = null;
  const trickle =
    options.trickle &&
    setInterval(() => {
      const event = feed.addRandom();
      if (event && !quiet) console.log(`trickle: new ${describeEvent(event)}`);
    }, options.trickle.everyMs).unref();

  return {
    url: `http://${shownHost}:${port}`,
    keys: {
      demo: BUILT_IN_KEYS.demo.key,
      lowCredit: BUILT_IN_KEYS.lowCredit.key,
      noCredit: BUILT_IN_KEYS.noCredit.key,
      rateLimited: BUILT_IN_KEYS.rateLimited.key,
      blocked: BUILT_IN_KEYS.blocked.key,
    },
    // eslint-disable-next-line no-restricted-syntax -- one object per sandbox, made at start
    get data() {
      return feed.data;
    },
    ...controls,
    addKey: (key, workspace) => workspaces.add(key, workspace),
    revokeKey: (key) => workspaces.revoke(key),
    credits: (key) => workspaces.find(key)?.credits,
    close: () => {
      if (trickle) clearInterval(trickle);
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
