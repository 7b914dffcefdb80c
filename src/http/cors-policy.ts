/** Options of {@link corsPolicy}. */
export interface CorsOptions {
  /** Origins allowed (`CORS_ORIGINS`); `*` allows any. */
  origins: readonly string[];
  /** Response headers a page may read. */
  exposedHeaders: readonly string[];
  /** How long a browser may keep a preflight's answer. */
  maxAgeSeconds: number;
}

/** The CORS rules, asked by each HTTP path that answers a page (`useCors`, the JSON lane). */
export interface CorsPolicy {
  /** The headers that let a page of `origin` read a response; null for none (not allowed). */
  allowOrigin(origin: string | null | undefined): Record<string, string> | null;
  /** `Access-Control-Expose-Headers`, for an allowed origin. */
  readonly expose: string;
  readonly maxAgeSeconds: number;
}

/**
 * CORS for web apps, never with credentials (callers send a key or token in a header, not
 * cookies): `*` answers `Access-Control-Allow-Origin: *` itself, a list names the caller's origin
 * back when it is listed (with `Vary: Origin`), and an origin not listed gets no CORS headers (the
 * browser refuses). Unlike Yoga's, which reflects any origin for `*` and allows credentials.
 */
export function corsPolicy({ origins, exposedHeaders, maxAgeSeconds }: CorsOptions): CorsPolicy {
  const any = origins.includes('*');
  const listed = new Set(origins);
  return {
    allowOrigin(origin): Record<string, string> | null {
      if (!origin) return null;
      if (any) return { 'access-control-allow-origin': '*' };
      if (!listed.has(origin)) return null;
      return { 'access-control-allow-origin': origin, vary: 'Origin' };
    },
    expose: exposedHeaders.join(', '),
    maxAgeSeconds,
  };
}
