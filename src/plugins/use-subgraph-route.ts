import type { Plugin } from 'graphql-yoga';

/** Where the Apollo Federation subgraph is served, on the gateway's own port. */
export const SUBGRAPH_PATH = '/subgraph';

/** A fetch handler with Yoga's signature: the subgraph's own Yoga. */
interface FetchHandler {
  fetch(request: Request, serverContext: Record<string, unknown>): Response | Promise<Response>;
}

/**
 * Hands every request for `path` to `server` (POST, GET and preflights alike), before anything
 * else of this Yoga sees it: the subgraph runs its own plugins (key handling, limits, budget,
 * credits, reports), so a request is counted and logged once.
 */
export function useSubgraphRoute(path: string, server: FetchHandler): Plugin {
  return {
    // Not async: every other request goes on without an extra tick.
    onRequest({ url, request, serverContext, endResponse }) {
      if (url.pathname !== path) return;
      return Promise.resolve(server.fetch(request, serverContext as Record<string, unknown>)).then(
        endResponse,
      );
    },
  };
}
