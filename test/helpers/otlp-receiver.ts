import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/JSON export carried it, its attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's enum: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  status: { code?: number; message?: string };
  /** The `service.name` of its resource. */
  service: unknown;
}

/** OTLP's span kinds, as OTLP/JSON numbers them. */
export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

/** One POST the receiver got. */
export interface ReceivedExport {
  path: string;
  contentType: string;
  body: Buffer;
}

/** An OTLP/JSON `AnyValue` as a plain value (`intValue` may come as a string: int64). */
function valueOf(value: Record<string, any> | undefined): unknown {
  if (!value) return undefined;
  if ('stringValue' in value) return value.stringValue;
  if ('boolValue' in value) return value.boolValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('arrayValue' in value) return (value.arrayValue.values ?? []).map(valueOf);
  return value;
}

function attributesOf(list: { key: string; value: Record<string, any> }[] | undefined) {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

/**
 * An OTLP/HTTP receiver on loopback port 0, as a collector would be: it answers every POST to
 * `/v1/traces` with 200 and keeps the bodies; `spans()` decodes those sent as `http/json`
 * (`ExportTraceServiceRequest`). Register `close` in `afterAll`.
 */
export async function startOtlpReceiver() {
  const exports: ReceivedExport[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      exports.push({
        path: req.url ?? '',
        contentType: req.headers['content-type'] ?? '',
        body: Buffer.concat(chunks),
      });
      const json = String(req.headers['content-type']).includes('json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    /** The base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
    url: `http://127.0.0.1:${port}`,
    /** Every POST received, in order. */
    exports,
    /** The spans of every `http/json` export received so far. */
    spans(): ReceivedSpan[] {
      const spans: ReceivedSpan[] = [];
      for (const { contentType, body } of exports) {
        if (!contentType.includes('json')) continue;
        const request = JSON.parse(body.toString('utf8'));
        for (const resourceSpans of request.resourceSpans ?? []) {
          const service = attributesOf(resourceSpans.resource?.attributes)['service.name'];
          for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
            for (const span of scopeSpans.spans ?? []) {
              spans.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                kind: span.kind,
                attributes: attributesOf(span.attributes),
                events: (span.events ?? []).map((event: any) => ({
                  name: event.name,
                  attributes: attributesOf(event.attributes),
                })),
                status: span.status ?? {},
                service,
              });
            }
          }
        }
      }
      return spans;
    },
    /** Everything received, as text: to search for what must never be exported. */
    text(): string {
      return exports.map(({ body }) => body.toString('latin1')).join('\n');
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An OTLP receiver started by {@link startOtlpReceiver}. */
export type OtlpReceiver = Awaited<ReturnType<typeof startOtlpReceiver>>;
