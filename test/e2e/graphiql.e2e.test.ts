import { fileURLToPath } from 'node:url';
import { type Browser, type Locator, type Page, type Request } from 'playwright-core';
import { launchChromium } from '../helpers/launch-chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_IN_KEYS } from '../../src/sandbox/workspaces.js';
import {
  freePort,
  killGatewayProcesses,
  startGatewayProcess,
  type GatewayProcess,
} from '../helpers/start-process.js';

const SCREENSHOT = fileURLToPath(new URL('./__screenshots__/graphiql.png', import.meta.url));

/** Where a request goes: blob: URLs carry their creator's origin; data: URLs go nowhere. */
function destination(url: string): string | null {
  const parsed = new URL(url);
  return parsed.protocol === 'data:' ? null : parsed.origin;
}

/** What a Monaco editor shows, one line per line; it renders only the lines in view. */
async function editorText(editor: Locator): Promise<string> {
  const lines = await editor.locator('.view-lines').filter({ visible: true }).innerText();
  return lines.replaceAll('\u00a0', ' ');
}

const UNTIL = { timeout: 15_000, interval: 100 };

/**
 * GraphiQL as a new user meets it: `node dist/main.js` (what `npm start` runs: the bundle, whose
 * GraphiQL page is a chunk it loads on demand) with no settings, so on its own sandbox.
 */
describe('GraphiQL in a browser', () => {
  let gateway: GatewayProcess | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let origin: string;
  const requests: Request[] = [];
  const failures: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    gateway = await startGatewayProcess({ SANDBOX_PORT: String(await freePort()) }, { dist: true });
    origin = gateway.origin;
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });

    // Nothing may leave loopback, even when an assertion below is about to fail.
    await context.route(
      (url) => url.hostname !== '127.0.0.1',
      (route) => route.abort('blockedbyclient'),
    );
    context.on('request', (request) => requests.push(request));
    context.on('requestfailed', (request) =>
      failures.push(`${request.url()}: ${request.failure()?.errorText ?? 'failed'}`),
    );
    context.on('response', (response) => {
      if (response.status() >= 400) failures.push(`${response.url()}: HTTP ${response.status()}`);
    });

    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    const response = await page.goto(gateway.url);
    expect(await response?.request().headerValue('accept')).toContain('text/html');
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-type']).toMatch(/^text\/html/);
    await page.locator('.graphiql-container').first().waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    gateway?.child.kill('SIGTERM');
    await gateway?.exited;
    killGatewayProcesses();
  });

  it('opens with the example query, the demo key and the budget in the headers editor', async () => {
    await expect(page.title()).resolves.toBe('Business-Signals GraphQL');
    const queryEditor = page.locator('.graphiql-query-editor');
    await expect.poll(() => editorText(queryEditor), UNTIL).toContain('query LatestFunding {');
    expect(await editorText(queryEditor)).toContain('fundingEvents(first: 5');

    await page.getByRole('button', { name: 'Headers', exact: true }).click();
    const headersEditor = page.locator('section.graphiql-editor-tool[aria-label="Headers"]');
    await expect
      .poll(() => editorText(headersEditor), UNTIL)
      .toContain(`"X-API-Key":"${BUILT_IN_KEYS.demo.key}"`);
    expect(await editorText(headersEditor)).toContain('"X-Credit-Budget":"1000"');
  });

  it('runs the example query with the demo key and shows the data and the credits spent', async () => {
    const answered = page.waitForResponse(
      (response) =>
        response.request().method() === 'POST' &&
        (response.request().postData() ?? '').includes('LatestFunding'),
    );
    await page.locator('button.graphiql-execute-button').click();

    const response = await answered;
    expect(response.status()).toBe(200);
    expect(await response.request().headerValue('x-api-key')).toBe(BUILT_IN_KEYS.demo.key);
    const body = await response.json();
    expect(body.errors).toBeUndefined();
    expect(body.data.fundingEvents.edges.length).toBeGreaterThan(0);
    expect(body.extensions.credits.used).toBeGreaterThan(0);

    const resultPane = page.locator('.graphiql-response');
    await expect.poll(() => editorText(resultPane), UNTIL).toContain('"fundingEvents": {');
    await page.screenshot({ path: SCREENSHOT });

    // "extensions" comes after "data", out of view: scroll to the end as a user would.
    await resultPane.locator('.monaco-editor').click();
    await page.keyboard.press('Control+End');
    await expect.poll(() => editorText(resultPane), UNTIL).toContain('"credits": {');
  });

  it('loads everything from the gateway on 127.0.0.1, with no failed request', () => {
    expect(requests.length).toBeGreaterThan(0);
    const elsewhere = requests
      .map((request) => request.url())
      .filter((url) => {
        const to = destination(url);
        return to !== null && to !== origin;
      });
    expect(elsewhere).toEqual([]);
    expect(failures).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
