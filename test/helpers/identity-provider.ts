import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

/** The `iss` and `aud` the test identity provider issues tokens with. */
export const ISSUER = 'https://idp.test/';
export const AUDIENCE = 'business-signals-gateway';

/** A signing key of the identity provider. */
export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

/** What a token says, over the defaults of {@link sign}. */
export interface TokenOptions {
  sub?: string;
  iss?: string;
  aud?: string;
  /** `exp`: seconds since the epoch, or a jose duration from now (`'10m'`); null for none. */
  exp?: number | string | null;
  nbf?: number | string;
  /** More claims, e.g. `{ workspace: 'acme' }`. */
  claims?: Record<string, unknown>;
}

/** A token signed with `key` (its `kid` and `alg` in the header): `sub` alice, 10 minutes. */
export function sign(key: SigningKey, options: TokenOptions = {}): Promise<string> {
  const jwt = new SignJWT(options.claims ?? {})
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setSubject(options.sub ?? 'alice')
    .setIssuer(options.iss ?? ISSUER)
    .setAudience(options.aud ?? AUDIENCE)
    .setIssuedAt();
  if (options.exp !== null) jwt.setExpirationTime(options.exp ?? '10m');
  if (options.nbf !== undefined) jwt.setNotBefore(options.nbf);
  return jwt.sign(key.privateKey);
}

/** A fresh key pair for `alg`, named `kid`. */
export async function makeKey(kid: string, alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, publicKey };
}

/**
 * How the JWKS URL answers a GET: `serve` the keys; `fail` with HTTP 500; `garbage`, a 200 whose
 * body is not JSON; `drop` the connection unanswered; `hang`: hold it, unanswered, until the mode
 * changes (it is then answered as the new mode says) or the client gives up.
 */
export type JwksMode = 'serve' | 'fail' | 'garbage' | 'drop' | 'hang';

/** An identity provider on loopback port 0: its JWKS, to which keys can be added. */
export interface IdentityProvider {
  /** The JWKS URL (`JWT_JWKS_URL`). */
  jwksUrl: string;
  /** Makes a key and publishes it in the JWKS from now on. */
  addKey(kid: string, alg?: string): Promise<SigningKey>;
  /** GETs of the JWKS so far, however they were answered. */
  fetches(): number;
  /** Answers the GETs from now on, and those held (`hang`), as `mode` says; `serve` at first. */
  setMode(mode: JwksMode): void;
  /** GETs held unanswered now (`hang`), their clients still waiting. */
  held(): number;
  close(): Promise<void>;
}

/** Starts an identity provider; register `close` in `afterAll`. */
export async function startIdentityProvider(): Promise<IdentityProvider> {
  const keys: JWK[] = [];
  let fetches = 0;
  let mode: JwksMode = 'serve';
  let held: ServerResponse[] = [];
  const answer = (response: ServerResponse) => {
    if (mode === 'hang') {
      held.push(response);
    } else if (mode === 'drop') {
      response.socket?.destroy();
    } else if (mode === 'fail') {
      response.writeHead(500, { 'content-type': 'text/plain' }).end('identity provider down');
    } else {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(mode === 'garbage' ? '<html>not a JWKS' : JSON.stringify({ keys }));
    }
  };
  const server = createServer((request, response) => {
    if (request.url !== '/.well-known/jwks.json') {
      response.writeHead(404).end();
      return;
    }
    fetches += 1;
    answer(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    jwksUrl: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    async addKey(kid, alg = 'RS256') {
      const key = await makeKey(kid, alg);
      keys.push({ ...(await exportJWK(key.publicKey)), kid, alg, use: 'sig' });
      return key;
    },
    fetches: () => fetches,
    setMode(next) {
      mode = next;
      const waiting = held;
      held = [];
      for (const response of waiting) if (!response.socket?.destroyed) answer(response);
    },
    held: () => held.filter((response) => !response.socket?.destroyed).length,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/**
 * The settings of `AUTH_MODE=jwt` over `idp`: its JWKS, issuer and audience, and a JWKS cooldown
 * of 0 (its default, 30 s, outlasts a suite) so that a key added after the first fetch is fetched
 * at once. A suite adds where the workspace keys come from.
 */
export function jwtSettings(idp: Pick<IdentityProvider, 'jwksUrl'>) {
  return {
    authMode: 'jwt' as const,
    jwtJwksUrl: idp.jwksUrl,
    jwtIssuer: ISSUER,
    jwtAudience: AUDIENCE,
    jwtJwksCooldownMs: 0,
  };
}
