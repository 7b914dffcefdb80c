import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

/** A gateway's settings for `AUTH_MODE=jwt` with a quota, and the bearer token to load it with. */
export interface JwtSide {
  /** Over the gateway's environment: `AUTH_MODE=jwt`, the JWKS served here, the server's key. */
  env: Record<string, string>;
  /** The headers of a request: `Authorization: Bearer <token>`. */
  headers: Record<string, string>;
  close(): void;
}

/**
 * An identity provider on loopback for a benchmark: one ES256 key in a JWKS served here, and one
 * token for `bench-user`; the gateway's settings put the workspace's key (`apiKey`) on the server
 * and a quota (in memory, or in Redis with `redisUrl`) too large to refuse anything.
 */
export async function startJwtSide(apiKey: string, redisUrl?: string): Promise<JwtSide> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwks = JSON.stringify({
    keys: [{ ...(await exportJWK(publicKey)), kid: 'bench', alg: 'ES256', use: 'sig' }],
  });
  const server = createServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'application/json' }).end(jwks),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = 'https://idp.bench/';
  const audience = 'business-signals-gateway';
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: 'bench' })
    .setSubject('bench-user')
    .setIssuer(issuer)
    .setAudience(audience)
    .setExpirationTime('2h')
    .sign(privateKey);
  return {
    env: {
      AUTH_MODE: 'jwt',
      JWT_JWKS_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`,
      JWT_ISSUER: issuer,
      JWT_AUDIENCE: audience,
      UPSTREAM_API_KEY: apiKey,
      CREDIT_QUOTA: '1000000000/day',
      ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    },
    headers: { authorization: `Bearer ${token}` },
    close: () => server.close(),
  };
}
