import type { Plugin } from 'graphql-yoga';
import { PROMETHEUS_TEXT } from '../metrics/serve-metrics.js';

/** Serves `GET /metrics` with the text `scrape` returns (Prometheus's exposition format). */
export function useMetricsEndpoint(scrape: () => Promise<string>): Plugin {
  return {
    onRequest({ url, request, endResponse }) {
      if (url.pathname !== '/metrics' || request.method !== 'GET') return;
      return scrape().then(
        (text) =>
          endResponse(
            new Response(text, {
              headers: { 'content-type': PROMETHEUS_TEXT, 'cache-control': 'no-store' },
            }),
          ),
        () => endResponse(new Response('metrics unavailable\n', { status: 503 })),
      );
    },
  };
}
