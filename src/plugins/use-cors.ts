import type { Plugin } from 'graphql-yoga';
import type { CorsPolicy } from '../http/cors-policy.js';

/**
 * Yoga's adapter over the CORS rules (`http/cors-policy.ts`): answers preflights (204, the
 * methods and headers asked, for an allowed origin) and adds the CORS headers to every response
 * to an allowed origin. Replaces Yoga's own.
 */
export function useCors(cors: CorsPolicy): Plugin {
  return {
    onRequest({ request, endResponse }) {
      if (request.method !== 'OPTIONS') return;
      const headers = cors.allowOrigin(request.headers.get('origin')) ?? {};
      if (headers['access-control-allow-origin']) {
        const method = request.headers.get('access-control-request-method');
        const asked = request.headers.get('access-control-request-headers');
        if (method) headers['access-control-allow-methods'] = method;
        if (asked) headers['access-control-allow-headers'] = asked;
        headers['access-control-max-age'] = String(cors.maxAgeSeconds);
      }
      endResponse(new Response(null, { status: 204, headers }));
    },
    onResponse({ request, response }) {
      const headers = cors.allowOrigin(request.headers.get('origin'));
      if (!headers) return;
      for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
      response.headers.set('access-control-expose-headers', cors.expose);
    },
  };
}
