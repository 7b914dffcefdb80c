import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookSender } from '../../src/alerts/send-webhook.js';
import { checkTarget, isPrivateAddress } from '../../src/alerts/target-guard.js';

const SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;

describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
  ])('%s is private', (address) => expect(isPrivateAddress(address)).toBe(true));
  it.each(['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111'])('%s is public', (address) =>
    expect(isPrivateAddress(address)).toBe(false),
  );
});

describe('checkTarget', () => {
  it('refuses http, other schemes, credentials in the URL, private literals and names', async () => {
    for (const url of [
      'http://93.184.215.14/x',
      'ftp://93.184.215.14/x',
      'https://user:pass@93.184.215.14/x',
      'https://127.0.0.1/x',
      'https://localhost/x',
      'https://[::ffff:169.254.169.254]/x',
      'not a url',
      `https://93.184.215.14/${'x'.repeat(2_048)}`,
    ]) {
      await expect(checkTarget(url, false), url).rejects.toThrow();
    }
    await expect(checkTarget('https://93.184.215.14/x', false)).resolves.toBeInstanceOf(URL);
    await expect(checkTarget('http://127.0.0.1:9/x', true)).resolves.toBeInstanceOf(URL);
  });
});

describe('the webhook sender', () => {
  let server: Server;
  let base: string;
  const seen: { url: string; headers: Record<string, unknown>; body: string }[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        seen.push({
          url: request.url ?? '',
          headers: request.headers,
          body: Buffer.concat(chunks).toString(),
        });
        if (request.url === '/redirect') {
          response.writeHead(302, { location: '/ok' }).end();
        } else if (request.url === '/large') {
          response.writeHead(200);
          // Far more than the sender reads: it stops at its bound and still acknowledges.
          const chunk = Buffer.alloc(64 * 1024, 'x');
          let sent = 0;
          const more = () => {
            while (sent < 200 && response.write(chunk)) sent++;
            if (sent < 200) response.once('drain', more);
            else response.end();
          };
          more();
        } else if (request.url === '/hang') {
          // Never answered.
        } else {
          response.writeHead(request.url === '/gone' ? 410 : 200).end('ok');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://localhost:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('signs as Standard Webhooks does, verifiable by the standardwebhooks package', async () => {
    const sender = createWebhookSender({ timeoutMs: 2_000, allowPrivate: true });
    try {
      const body = JSON.stringify({ data: { fundingEventAdded: { uuid: 'u1' } } });
      const outcome = await sender.send({ id: 'msg_1', url: `${base}/ok`, secret: SECRET, body });
      expect(outcome).toEqual({ ok: true, status: 200 });
      const last = seen.at(-1)!;
      expect(last.headers['webhook-id']).toBe('msg_1');
      const headers = Object.fromEntries(
        ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((n) => [
          n,
          String(last.headers[n]),
        ]),
      );
      expect(new Webhook(SECRET).verify(last.body, headers)).toEqual(JSON.parse(body));
    } finally {
      await sender.close();
    }
  });

  it('does not follow redirects, says 410, bounds the answer and the time', async () => {
    const sender = createWebhookSender({ timeoutMs: 500, allowPrivate: true });
    try {
      const message = { id: 'msg_2', secret: SECRET, body: '{}' };
      const redirected = await sender.send({ ...message, url: `${base}/redirect` });
      expect(redirected).toMatchObject({ ok: false, status: 302 });
      expect(
        seen.filter((entry) => entry.url === '/ok' && entry.headers['webhook-id'] === 'msg_2'),
      ).toEqual([]);
      expect(await sender.send({ ...message, url: `${base}/gone` })).toMatchObject({
        ok: false,
        status: 410,
        gone: true,
      });
      expect(await sender.send({ ...message, url: `${base}/large` })).toEqual({
        ok: true,
        status: 200,
      });
      const started = Date.now();
      const hung = await sender.send({ ...message, url: `${base}/hang` });
      expect(hung).toMatchObject({
        ok: false,
        status: 0,
        reason: 'no answer within the attempt timeout',
      });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await sender.close();
    }
  });

  it('checks the address a name resolves to at each connection, and connects to none private', async () => {
    const sender = createWebhookSender({ timeoutMs: 2_000, allowPrivate: false });
    try {
      const before = seen.length;
      // `localhost` resolves to loopback: refused when the connection is made, nothing sent.
      const outcome = await sender.send({
        id: 'msg_3',
        url: `${base}/ok`,
        secret: SECRET,
        body: '{}',
      });
      expect(outcome).toMatchObject({ ok: false, status: 0, refused: true });
      expect(JSON.stringify(outcome)).not.toContain(SECRET);
      expect(seen.length).toBe(before);
    } finally {
      await sender.close();
    }
  });
});
