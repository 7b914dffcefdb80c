import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { answerKey } from '../../src/answers/answer-key.js';
import { keyHash, ownerOf } from '../../src/upstream/page-cache/page-key.js';

/** The parts of a node request `answerKey` reads. */
const request = (over: Partial<Pick<IncomingMessage, 'method' | 'url' | 'headers'>> = {}) =>
  ({
    method: 'POST',
    url: '/graphql',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    ...over,
  }) as IncomingMessage;

const body = Buffer.from('{"query":"{ companies(first: 2) { nodes { name } } }"}');
const key = (over = {}, bytes: Buffer | null = body, api = 'key-a', version = 'v1') =>
  answerKey(api, request(over), bytes, version);

describe('answerKey', () => {
  it('is the same for the same request, and fixed in size whatever the document', () => {
    expect(key()).toBe(key());
    expect(key()).toMatch(/^[\w-]{22}\n[\w-]{43}$/);
    expect(key({}, Buffer.alloc(50_000, 'a'))).toMatch(/^[\w-]{22}\n[\w-]{43}$/);
  });

  it('differs with the workspace key, the schema, the method, the URL, the body and each shaping header', () => {
    const keys = [
      key(),
      key({}, body, 'key-b'),
      key({}, body, 'key-a', 'v2'),
      key({ method: 'GET' }, null),
      key({ url: '/graphql?query=%7B__typename%7D' }, null),
      key({}, Buffer.from(`${body.toString()} `)),
      key({ headers: { accept: 'application/graphql-response+json' } }),
      key({ headers: { accept: 'application/json', 'content-type': 'application/graphql+json' } }),
      key({ headers: { accept: 'application/json', origin: 'https://app.example' } }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("is led by the key's hash, as a page's name is, and never holds the key", () => {
    const name = key({}, body, 'a-secret-api-key');
    expect(name).not.toContain('secret');
    expect(ownerOf(name)).toBe(keyHash('a-secret-api-key'));
  });
});
