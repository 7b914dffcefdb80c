import { type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/launch-chromium.js';
import { eventually } from '../helpers/subscribe.js';
import { startStack, type Stack } from '../helpers/start-stack.js';

// POLL_INTERVAL_SECONDS=1 (default 30): the gateway finds the new event within a second of its
// being added, so that the test waits for one poll, not thirty seconds. Every other setting is
// the default.
const POLL = { pollIntervalSeconds: 1 };

const SUBSCRIPTION =
  'subscription { fundingEventAdded(round: ["series_a"]) { round company { name } } }';

/** What a Monaco editor shows, one line per line; it renders only the lines in view. */
async function editorText(editor: Locator): Promise<string> {
  const lines = await editor.locator('.view-lines').filter({ visible: true }).innerText();
  return lines.replaceAll('\u00a0', ' ');
}

const UNTIL = { timeout: 15_000, interval: 100 };

describe('GraphiQL in a browser, a subscription', () => {
  let stack: Stack | undefined;
  let browser: Browser | undefined;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    stack = await startStack({ config: POLL });
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    // Nothing may leave loopback.
    await context.route(
      (url) => url.hostname !== '127.0.0.1',
      (route) => route.abort('blockedbyclient'),
    );
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(stack.url);
    await page.locator('.graphiql-container').first().waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('shows an event added to the service after the subscription started', async () => {
    const queryEditor = page.locator('.graphiql-query-editor');
    await expect.poll(() => editorText(queryEditor), UNTIL).toContain('query LatestFunding {');
    // As a user pastes: select all, then insert the text at once (typing it key by key would
    // let the editor close the brackets a second time).
    await queryEditor.locator('.monaco-editor').click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(SUBSCRIPTION);
    await expect.poll(() => editorText(queryEditor), UNTIL).toBe(SUBSCRIPTION);
    // GraphiQL reads the edited document a moment later (debounced), then keeps it in
    // localStorage: run before that and it still runs the example's "LatestFunding".
    await expect
      .poll(() => page.evaluate(() => localStorage.getItem('graphiql:query')), UNTIL)
      .toBe(SUBSCRIPTION);

    const started = Date.now();
    await page.locator('button.graphiql-execute-button').click();
    // The subscription's first poll: events added after it are new to the subscriber.
    const sandbox = stack!.sandbox;
    await eventually(
      () =>
        sandbox
          .requestLog()
          .some(
            (entry) =>
              entry.endpoint === '/v1/funding-events' &&
              entry.params['since'] !== undefined &&
              entry.params['round']?.[0] === 'series_a' &&
              entry.at >= started,
          ),
      10_000,
      'the first poll',
    );

    const [event] = sandbox.addEvents({ kind: 'fundingEvent', round: 'series_a' });
    const { name } = event!.company;

    const resultPane = page.locator('.graphiql-response');
    await expect.poll(() => editorText(resultPane), UNTIL).toContain(`"name": "${name}"`);
    expect(await editorText(resultPane)).toContain('"round": "series_a"');
    expect(pageErrors).toEqual([]);
  });
});
