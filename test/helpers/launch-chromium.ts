import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's package; Playwright's own browser download does not work on this machine. */
const CHROMIUM = '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/** Starts Debian's headless Chromium; throws, saying what to install, when it is missing. */
export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}. Install it with: apt-get update && apt-get install -y chromium`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
