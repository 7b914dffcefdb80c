import { createPublicKey, type KeyObject } from 'node:crypto';
import type { Kind } from '../config/setting.js';

/**
 * How a caller proves who it is. `api-key`: it sends the workspace's own key, which is forwarded
 * upstream. `jwt`: it sends a token of the identity provider; the upstream key is the server's.
 */
export const AUTH_MODES = ['api-key', 'jwt'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

/** The signature algorithms a token may use: asymmetric ones only, so no verifier can sign. */
export const JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

/** The algorithms a public key of each type (and, for EC, curve) can verify. */
const ALGORITHMS_BY_KEY: Record<string, readonly JwtAlgorithm[]> = {
  rsa: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'],
  'rsa-pss': ['PS256', 'PS384', 'PS512'],
  'ec:prime256v1': ['ES256'],
  'ec:secp384r1': ['ES384'],
  'ec:secp521r1': ['ES512'],
  ed25519: ['EdDSA', 'Ed25519'],
};

/** Of `algorithms`, those `key` can verify. */
export function algorithmsFor(key: KeyObject, algorithms: readonly JwtAlgorithm[]): JwtAlgorithm[] {
  const curve = key.asymmetricKeyDetails?.namedCurve;
  const type = key.asymmetricKeyType === 'ec' ? `ec:${curve}` : (key.asymmetricKeyType ?? '');
  const fit = ALGORITHMS_BY_KEY[type] ?? [];
  return algorithms.filter((algorithm) => fit.includes(algorithm));
}

/**
 * A comma-separated list of {@link JWT_ALGORITHMS}. `none` (unsigned tokens) and the HMAC ones
 * (`HS256`…) are refused: with HMAC the verifying key also signs, and a token signed with the
 * public key's bytes would pass (algorithm confusion).
 */
export function jwtAlgorithms(): Kind<JwtAlgorithm[]> {
  return {
    parse(raw) {
      const names = raw
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean);
      for (const name of names) {
        if (/^none$/i.test(name)) {
          throw new Error(`must not name none: it accepts unsigned tokens`);
        }
        if (/^HS\d+$/i.test(name)) {
          throw new Error(
            `must not name ${name}: with HMAC the verifying key also signs, so anyone who has it (or the public key's bytes) could sign tokens`,
          );
        }
        if (!(JWT_ALGORITHMS as readonly string[]).includes(name)) {
          throw new Error(
            `must name algorithms among ${JWT_ALGORITHMS.join(', ')} (got "${name}")`,
          );
        }
      }
      if (names.length === 0) throw new Error(`must name at least one algorithm`);
      return [...new Set(names)] as JwtAlgorithm[];
    },
  };
}

/**
 * A public key in PEM (`-----BEGIN PUBLIC KEY-----`…; `\n` written as two characters, as an
 * environment variable often holds it, is read as a line break) that can verify one of the
 * algorithms of `JWT_ALGORITHMS`. A private key is refused: the gateway never needs one.
 */
export function publicKeyPem(): Kind<KeyObject> {
  return {
    parse(raw, valueOf) {
      const pem = raw.trim().replace(/\\n/g, '\n');
      if (/PRIVATE KEY/.test(pem)) {
        throw new Error('must be a public key, not a private one: give the verifying half only');
      }
      let key: KeyObject;
      try {
        key = createPublicKey(pem);
      } catch {
        throw new Error('must be a public key in PEM (-----BEGIN PUBLIC KEY----- …)');
      }
      const algorithms = valueOf('JWT_ALGORITHMS') as JwtAlgorithm[];
      if (algorithmsFor(key, algorithms).length === 0) {
        throw new Error(
          `must be a key that verifies one of JWT_ALGORITHMS (${algorithms.join(', ')}); it is a ${key.asymmetricKeyType} key`,
        );
      }
      return key;
    },
  };
}

/**
 * What {@link authSettingsProblems} reads of the settings: the mode, and whether each setting that
 * only `AUTH_MODE=jwt` reads is set (not null). A `Config` is one; config.ts is not imported here,
 * since it imports this module for its kinds and this check.
 */
export interface AuthSettings {
  readonly authMode: AuthMode;
  readonly jwtJwksUrl: unknown;
  readonly jwtPublicKey: unknown;
  readonly jwtIssuer: unknown;
  readonly jwtAudience: unknown;
  readonly upstreamApiKey: unknown;
  readonly upstreamKeys: unknown;
  readonly jwtQuotaClaim: unknown;
}

/** Exactly one of two settings set: null, or the problem. */
function exactlyOne(
  config: AuthSettings,
  a: keyof AuthSettings,
  b: keyof AuthSettings,
  names: [string, string],
) {
  const set = [config[a], config[b]].filter((value) => value !== null).length;
  if (set === 1) return null;
  return `${set === 0 ? 'neither' : 'both'} ${names[0]} and ${names[1]} set`;
}

/**
 * What is wrong with the authentication settings taken together, one line each (empty when
 * nothing is): with `AUTH_MODE=jwt`, `JWT_ISSUER` and `JWT_AUDIENCE` are required, and exactly one
 * of `JWT_JWKS_URL` or `JWT_PUBLIC_KEY` and one of `UPSTREAM_API_KEY` or `UPSTREAM_KEYS_FILE`;
 * with `AUTH_MODE=api-key` none of them is read, so setting one is a mistake said at boot.
 */
export function authSettingsProblems(config: AuthSettings): string[] {
  const jwtOnly = {
    JWT_JWKS_URL: config.jwtJwksUrl,
    JWT_PUBLIC_KEY: config.jwtPublicKey,
    JWT_ISSUER: config.jwtIssuer,
    JWT_AUDIENCE: config.jwtAudience,
    UPSTREAM_API_KEY: config.upstreamApiKey,
    UPSTREAM_KEYS_FILE: config.upstreamKeys,
    JWT_QUOTA_CLAIM: config.jwtQuotaClaim,
  };
  if (config.authMode === 'api-key') {
    const set = Object.keys(jwtOnly).filter(
      (name) => jwtOnly[name as keyof typeof jwtOnly] !== null,
    );
    if (set.length === 0) return [];
    return [
      `${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} read only with AUTH_MODE=jwt: set AUTH_MODE=jwt, or unset ${set.length === 1 ? 'it' : 'them'} (with AUTH_MODE=api-key each caller sends its own X-API-Key)`,
    ];
  }
  const problems: string[] = [];
  const missing = (['JWT_ISSUER', 'JWT_AUDIENCE'] as const).filter(
    (name) => jwtOnly[name] === null,
  );
  if (missing.length > 0) {
    problems.push(
      `AUTH_MODE=jwt requires ${missing.join(' and ')}: the "iss" and "aud" your identity provider puts in the tokens it issues for this gateway`,
    );
  }
  const keys = exactlyOne(config, 'jwtJwksUrl', 'jwtPublicKey', ['JWT_JWKS_URL', 'JWT_PUBLIC_KEY']);
  if (keys) {
    problems.push(
      `AUTH_MODE=jwt requires exactly one of JWT_JWKS_URL (the identity provider's keys, fetched) or JWT_PUBLIC_KEY (one key, in PEM): ${keys}`,
    );
  }
  const upstream = exactlyOne(config, 'upstreamApiKey', 'upstreamKeys', [
    'UPSTREAM_API_KEY',
    'UPSTREAM_KEYS_FILE',
  ]);
  if (upstream) {
    problems.push(
      `AUTH_MODE=jwt requires exactly one of UPSTREAM_API_KEY (one workspace's key) or UPSTREAM_KEYS_FILE (a key per workspace): ${upstream}`,
    );
  }
  return problems;
}
