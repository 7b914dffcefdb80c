import type { Config } from '../config.js';
import type { Logger } from '../logging/create-logger.js';
import type { RequestTracer } from './request-tracer.js';

/**
 * The request tracer `OTEL_TRACES_EXPORTER` asks for: with `otlp`, the OpenTelemetry SDK and one
 * OTLP/HTTP exporter, imported here and nowhere else; with `none` (the default), nothing. So with
 * traces off no SDK or exporter module is ever loaded, and no request pays for a span.
 */
export async function loadTracer(
  config: Config,
  options: { upstreamUrl: string; logger: Logger },
): Promise<RequestTracer | undefined> {
  if (config.tracesExporter !== 'otlp') return undefined;
  const { startTracing } = await import('./start-tracing.js');
  return startTracing(config, options);
}
