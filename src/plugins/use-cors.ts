import type { Plugin } from 'graphql-yoga';

/** Options of {@link useCors}. */
export interface CorsOptions {
  /** Origins allowed (`CORS_ORIGINS`); `*` allows any. */
  origins: readonly string[];
  /** Response headers a page may read. */
  exposedHeaders: readonly string[];
  /** How long a browser may keep a preflight's answer. */
  maxAgeSeconds: number;
}

/**
 * CORS for web apps, never with credentials (callers send a key or token in a header, not
 * cookies): `*` answers `Access-Control-Allow-Origin: *` itself, a list names the caller's origin
 * back when it is listed, and an origin not listed gets no CORS headers (the browser refuses).
 * Replaces Yoga's, which reflects any origin for `*` and allows credentials.
 */
export function useCors({ origins, exposedHeaders, maxAgeSeconds }: CorsOptions): Plugin {
  const any = origins.includes('*');
  const listed = new Set(origins);
  const expose = exposedHeaders.join(', ');

  function allowOrigin(request: Request): Record<string, string> | null {
    const origin = request.headers.get('origin');
    if (!origin) return null;
    if (any) return { 'access-control-allow-origin': '*' };
    if (!listed.has(origin)) return null;
    return { 'access-control-allow-origin': origin, vary: 'Origin' };
  }

  return {
    onRequest({ request, endResponse }) {
      if (request.method !== 'OPTIONS') return;
      const headers = allowOrigin(request) ?? {};
      if (headers['access-control-allow-origin']) {
        const method = request.headers.get('access-control-request-method');
        const asked = request.headers.get('access-control-request-headers');
        if (method) headers['access-control-allow-methods'] = method;
        if (asked) headers['access-control-allow-headers'] = asked;
        headers['access-control-max-age'] = String(maxAgeSeconds);
      }
      endResponse(new Response(null, { status: 204, headers }));
    },
    onResponse({ request, response }) {
      const headers = allowOrigin(request);
      if (!headers) return;
      for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
      response.headers.set('access-control-expose-headers', expose);
    },
  };
}
