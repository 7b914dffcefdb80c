import { WebSocket } from 'undici';

/** Memory of a process right after a full garbage collection, in MiB. */
export interface SettledMemory {
  rssMb: number;
  heapUsedMb: number;
}

/**
 * Reads a Node process's memory after a full collection, through the inspector protocol of a
 * process started with `--inspect=127.0.0.1:<port>`: no code in the gateway, no `--expose-gc`.
 * A sawtooth of uncollected garbage is what makes raw RSS samples unfit for a growth slope.
 */
export class InspectorMemory {
  private nextId = 1;
  private readonly pending = new Map<number, (result: unknown) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
      if (message.id === undefined) return;
      this.pending.get(message.id)?.(message.result);
      this.pending.delete(message.id);
    });
  }

  /** Connects to the inspector listening on `port` (retrying while the process starts). */
  static async connect(port: number, timeoutMs = 10_000): Promise<InspectorMemory> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      try {
        const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
          webSocketDebuggerUrl: string;
        }[];
        const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
        await new Promise((resolve, reject) => {
          socket.addEventListener('open', resolve, { once: true });
          socket.addEventListener('error', reject, { once: true });
        });
        return new InspectorMemory(socket);
      } catch (error) {
        if (Date.now() > until) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  async settled(): Promise<SettledMemory> {
    await this.send('HeapProfiler.collectGarbage');
    const usage = (await this.evaluate('process.memoryUsage()')) as NodeJS.MemoryUsage;
    return { rssMb: usage.rss / 2 ** 20, heapUsedMb: usage.heapUsed / 2 ** 20 };
  }

  /** The value of `expression` in the process, passed through JSON. */
  async evaluate(expression: string): Promise<unknown> {
    const evaluated = (await this.send('Runtime.evaluate', {
      expression: `JSON.stringify(${expression})`,
      returnByValue: true,
    })) as { result: { value: string } };
    return JSON.parse(evaluated.result.value);
  }

  close(): void {
    this.socket.close();
  }

  private send(method: string, params: object = {}): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }
}
