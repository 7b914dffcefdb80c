import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** Seals and opens small secrets at rest (an alert's key and signing secret). */
export interface Seal {
  seal(text: string): string;
  open(sealed: string): string;
}

/**
 * AES-256-GCM under a key derived (HKDF-SHA256) from `secret` (`CURSOR_SECRET`, the same on
 * every instance): what a reader of the alerts' file or of Redis finds is `v1.<iv>.<tag>.<data>`,
 * never an API key or a webhook secret. A value sealed under another secret does not open.
 */
export function createSeal(secret: string): Seal {
  const key = Buffer.from(
    hkdfSync('sha256', secret, 'business-signals-gateway', 'alerts/seal/v1', 32),
  );
  return {
    seal(text) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const data = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
      return ['v1', iv, cipher.getAuthTag(), data]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },
    open(sealed) {
      const [version, iv, tag, data] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || data === undefined) {
        throw new Error('A sealed value is not one this gateway wrote (CURSOR_SECRET changed?)');
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(data, 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    },
  };
}
