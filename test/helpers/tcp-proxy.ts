import { connect, createServer, type Socket } from 'node:net';

/** A TCP proxy on loopback in front of one port, which a test cuts and restores. */
export interface TcpProxy {
  /** `redis://127.0.0.1:<proxy port>`: what an instance behind the proxy is given. */
  url: string;
  port: number;
  /**
   * Cuts every connection through the proxy and refuses new ones until {@link restore}: the
   * instance behind it finds the server unreachable, while others reach it.
   */
  cut(): void;
  /** Accepts connections again. */
  restore(): void;
  /**
   * From now on the server's answers are held back (its requests still reach it): what it does
   * applies, and the instance behind never hears of it. {@link release} sends them on.
   */
  holdAnswers(): void;
  /** Sends the answers held back, and the ones after, on. */
  release(): void;
  close(): Promise<void>;
}

/** Starts a proxy on a free loopback port in front of `127.0.0.1:targetPort`. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; server: Socket; held: Buffer[] }>();
  let cut = false;
  let holding = false;
  const proxy = createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const server = connect(targetPort, '127.0.0.1');
    const pair = { client, server, held: [] as Buffer[] };
    pairs.add(pair);
    client.on('data', (chunk) => server.write(chunk));
    server.on('data', (chunk) => {
      if (holding) pair.held.push(chunk);
      else client.write(chunk);
    });
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('close', end).on('error', end);
    server.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as { port: number };
  const handle: TcpProxy = {
    url: `redis://127.0.0.1:${port}`,
    port,
    cut() {
      cut = true;
      for (const { client, server } of pairs) {
        client.destroy();
        server.destroy();
      }
      pairs.clear();
    },
    restore() {
      cut = false;
    },
    holdAnswers() {
      holding = true;
    },
    release() {
      holding = false;
      for (const pair of pairs) {
        for (const chunk of pair.held.splice(0)) pair.client.write(chunk);
      }
    },
    async close() {
      handle.cut();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
  return handle;
}
