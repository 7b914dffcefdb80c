import { createServer, connect, type Server, type Socket } from 'node:net';

/** How a {@link TcpProxy} cuts its connections. */
export type CutMode =
  /**
   * Nothing crosses, and nothing is closed: a partition shorter than TCP's timeouts. Data waits
   * (as TCP would retransmit it) and crosses once restored; a new connection is accepted but goes
   * nowhere until then.
   */
  | 'silent'
  /** Every connection is reset at once, and new ones are refused until restored. */
  | 'reset';

/** A TCP proxy on loopback between a client and one server, which a test cuts and restores. */
export interface PartitionProxy {
  port: number;
  /** `redis://127.0.0.1:<port>`, for a proxy in front of Redis. */
  url: string;
  /**
   * Cuts every connection (and those opened meanwhile), or, given `ports`, only the connections
   * whose side towards the server has one of these local ports (as the server lists its clients).
   */
  cut(mode?: CutMode, ports?: readonly number[]): void;
  restore(): void;
  /** The local ports of the connections towards the server, as the server sees its clients. */
  serverPorts(): number[];
  close(): Promise<void>;
}

/** One connection through the proxy: the client's side and the server's. */
interface Pair {
  client: Socket;
  server?: Socket;
}

/**
 * Starts a proxy on a free loopback port that forwards every connection to `targetPort`, so that
 * a test can partition one client (a gateway instance) from the server (Redis) while the others
 * still reach it.
 */
export async function startPartitionProxy(targetPort: number): Promise<PartitionProxy> {
  const pairs = new Set<Pair>();
  let cut: CutMode | null = null;

  const join = (pair: Pair) => {
    const server = connect(targetPort, '127.0.0.1');
    pair.server = server;
    server.on('error', () => pair.client.destroy());
    pair.client.on('error', () => server.destroy());
    server.on('close', () => pair.client.destroy());
    pair.client.on('close', () => {
      server.destroy();
      pairs.delete(pair);
    });
    // Not `pipe`: a piped socket resumes itself on 'drain', and a silent cut must hold it.
    pair.client.on('data', (chunk: Buffer) => server.write(chunk));
    server.on('data', (chunk: Buffer) => pair.client.write(chunk));
  };

  const proxy: Server = createServer({ pauseOnConnect: true }, (client) => {
    if (cut === 'reset') {
      client.resetAndDestroy();
      return;
    }
    const pair: Pair = { client };
    pairs.add(pair);
    client.on('error', () => undefined);
    client.on('close', () => pairs.delete(pair));
    if (cut === null) {
      join(pair);
      client.resume();
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as { port: number };

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    cut(mode = 'silent', ports) {
      if (!ports) cut = mode;
      for (const pair of pairs) {
        if (ports && !ports.includes(pair.server?.localPort ?? -1)) continue;
        if (mode === 'reset') {
          pair.client.resetAndDestroy();
          pair.server?.destroy();
        } else {
          pair.client.pause();
          pair.server?.pause();
        }
      }
      if (mode === 'reset') {
        for (const pair of [...pairs]) if (pair.client.destroyed) pairs.delete(pair);
      }
    },
    serverPorts() {
      return [...pairs].flatMap((pair) => pair.server?.localPort ?? []);
    },
    restore() {
      cut = null;
      for (const pair of pairs) {
        if (pair.client.destroyed) continue;
        if (!pair.server) join(pair);
        pair.client.resume();
        pair.server!.resume();
      }
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.server?.destroy();
      }
      pairs.clear();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
