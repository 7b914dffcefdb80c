import { W3CTraceContextPropagator, ExportResultCode } from '@opentelemetry/core';
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { DEFAULT_SERVICE_NAME, type Config } from '../config.js';
import type { Logger } from '../logging/create-logger.js';
import { throttled } from '../upstream/page-cache/create-page-store.js';
import { otelRequestTracer } from './otel-request-tracer.js';
import type { RequestTracer } from './request-tracer.js';

/** At shutdown, how long the spans not yet exported may take to go before they are dropped. */
const FLUSH_MS = 5_000;

/** The instrumentation scope of the gateway's spans. */
const SCOPE = 'business-signals-gateway';

/**
 * Where spans go: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else
 * `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces` added (as the OTLP exporter specification says).
 */
export function tracesUrl(config: Config): string {
  return config.otlpTracesEndpoint ?? `${config.otlpEndpoint.replace(/\/+$/, '')}/v1/traces`;
}

/** The exporter of `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL`, the only one of the two loaded. */
async function createExporter(config: Config, url: string): Promise<SpanExporter> {
  const protocol = config.otlpTracesProtocol ?? config.otlpProtocol;
  const { OTLPTraceExporter } =
    protocol === 'http/json'
      ? await import('@opentelemetry/exporter-trace-otlp-http')
      : await import('@opentelemetry/exporter-trace-otlp-proto');
  // Headers, timeout, compression and certificates: the exporter reads OTEL_EXPORTER_OTLP_* itself.
  return new OTLPTraceExporter({ url });
}

/**
 * `exporter`, logging the exports that fail (a line per 30 s at most): their spans are lost and
 * the gateway goes on. The URL is shown without any credentials it holds.
 */
function reportingFailures(exporter: SpanExporter, url: string, logger: Logger): SpanExporter {
  const { origin, pathname } = new URL(url);
  const warn = throttled((message) => logger.warn(message));
  return {
    export(spans, done) {
      exporter.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS) {
          warn(
            `traces: ${spans.length} spans could not be exported to ${origin}${pathname} (${result.error?.message ?? 'failed'}); they are dropped`,
          );
        }
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/**
 * Starts the OpenTelemetry SDK for `OTEL_TRACES_EXPORTER=otlp`: a tracer provider of its own (not
 * registered globally, so that several gateways in one process keep apart), a batch processor
 * (its `OTEL_BSP_*` settings read by the SDK, as are `OTEL_TRACES_SAMPLER`, parent-based always-on
 * by default, and `OTEL_RESOURCE_ATTRIBUTES`) and the OTLP/HTTP exporter of the protocol set.
 * Each process exports its own spans: in a cluster, each worker.
 */
export async function startTracing(
  config: Config,
  options: { upstreamUrl: string; logger: Logger },
): Promise<RequestTracer> {
  const url = tracesUrl(config);
  const exporter = reportingFailures(await createExporter(config, url), url, options.logger);
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME }))
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(
      resourceFromAttributes({
        'process.pid': process.pid,
        ...(config.serviceName ? { 'service.name': config.serviceName } : {}),
      }),
    );
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  options.logger.info(`traces: exported over OTLP to ${new URL(url).origin}`);
  return otelRequestTracer({
    tracer: provider.getTracer(SCOPE),
    propagator: new W3CTraceContextPropagator(),
    upstreamUrl: options.upstreamUrl,
    async shutdown() {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, FLUSH_MS);
        timer.unref();
      });
      await Promise.race([provider.shutdown().catch(() => undefined), late]);
      clearTimeout(timer);
    },
  });
}
