import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/launch-chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AUDIENCE,
  ISSUER,
  sign,
  startIdentityProvider,
  type IdentityProvider,
  type SigningKey,
} from '../helpers/identity-provider.js';
import { startStack, type Stack } from '../helpers/start-stack.js';

/** The workspace's key: only the gateway holds it. */
const SERVER_KEY = 'server-held-key-4b1d';

/**
 * A web app on an origin of its own: its page asks its backend for the signed-in user's token
 * (here the test's identity provider signs one), then queries the gateway across origins with
 * `Authorization: Bearer <token>`, and shows the answer and the credit headers it may read.
 */
function webApp(gatewayUrl: () => string, token: () => Promise<string>): Promise<Server> {
  const page = () => `<!doctype html><html><body>
<pre id="out">loading</pre><pre id="credits"></pre><pre id="quota"></pre><pre id="refused"></pre>
<script>
const query = '{ companies(first: 3) { nodes { name } } }';
async function ask(headers) {
  const response = await fetch(${JSON.stringify(gatewayUrl())}, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  return response;
}
(async () => {
  const token = await (await fetch('/token')).text();
  const answer = await ask({ authorization: 'Bearer ' + token });
  document.getElementById('credits').textContent = answer.headers.get('x-credits-used');
  document.getElementById('quota').textContent = answer.headers.get('ratelimit-policy');
  document.getElementById('out').textContent = JSON.stringify((await answer.json()).data);
  const refused = await ask({});
  document.getElementById('refused').textContent =
    refused.status + ' ' + refused.headers.get('www-authenticate');
})().catch((error) => (document.getElementById('out').textContent = 'failed: ' + error));
</script></body></html>`;
  const server = createServer((request, response) => {
    if (request.url === '/token') {
      void token().then((jwt) =>
        response.writeHead(200, { 'content-type': 'text/plain' }).end(jwt),
      );
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html' }).end(page());
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('a web app in a browser, signed in, across origins', () => {
  let idp: IdentityProvider;
  let key: SigningKey;
  let stack: Stack;
  let app: Server;
  let browser: Browser | undefined;

  beforeAll(async () => {
    idp = await startIdentityProvider();
    key = await idp.addKey('k1');
    // A web app's settings: tokens of the test's identity provider, the key held by the server,
    // the app's origin, and a daily quota the page can read.
    app = await webApp(
      () => stack.url,
      () => sign(key, { sub: 'alice' }),
    );
    const appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    stack = await startStack({
      config: {
        authMode: 'jwt',
        jwtJwksUrl: idp.jwksUrl,
        jwtIssuer: ISSUER,
        jwtAudience: AUDIENCE,
        upstreamApiKey: SERVER_KEY,
        corsOrigins: [appOrigin],
        creditQuota: { credits: 1000, windowSeconds: 86_400 },
      },
    });
    stack.sandbox.addKey(SERVER_KEY, { credits: 1e9 });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    app?.close();
    await stack?.close();
    await idp?.close();
  });

  it('shows the data with a token; the page and its requests hold no upstream key', async () => {
    const context = await browser!.newContext();
    await context.route(
      (url) => url.hostname !== '127.0.0.1',
      (route) => route.abort('blockedbyclient'),
    );
    const page = await context.newPage();
    const sent: string[] = [];
    page.on('request', (request) => {
      sent.push(
        `${request.url()}\n${JSON.stringify(request.headers())}\n${request.postData() ?? ''}`,
      );
    });
    const appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/`;
    await page.goto(appUrl);
    await page.waitForFunction(() => document.getElementById('refused')!.textContent !== '', null, {
      timeout: 15_000,
    });

    const shown = JSON.parse((await page.locator('#out').textContent())!);
    const rest = await stack.rest('companies?limit=3', SERVER_KEY);
    expect(shown).toEqual({
      companies: { nodes: rest.data.map((c: { name: string }) => ({ name: c.name })) },
    });
    // What CORS lets the page read: the credits and the quota; a 401 says how to authenticate.
    expect(await page.locator('#credits').textContent()).toBe('3');
    expect(await page.locator('#quota').textContent()).toMatch(/q=1000/);
    expect(await page.locator('#refused').textContent()).toBe('401 Bearer');

    // The key appears nowhere the browser sees: not in the page, not in any request it made.
    expect(await page.content()).not.toContain(SERVER_KEY);
    expect(sent.length).toBeGreaterThanOrEqual(4);
    for (const request of sent) {
      expect(request).not.toContain(SERVER_KEY);
      expect(request.toLowerCase()).not.toContain('x-api-key');
    }
    // The service saw the server's key, on the browser's behalf.
    expect(stack.sandbox.requestLog().length).toBeGreaterThan(0);
    await context.close();
  });
});
