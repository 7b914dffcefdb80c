import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * Browser tests (`npm run test:e2e`), kept out of `npm test`. They need Debian's Chromium at
 * /usr/bin/chromium. Same resolution as the unit tests, so there is one copy of `graphql`.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/e2e/**/*.e2e.test.ts'],
    exclude: configDefaults.exclude,
    // dist/ built as `npm start` builds it: the GraphiQL suite runs `node dist/main.js`.
    globalSetup: ['test/setup/build-dist.ts'],
    testTimeout: 60_000,
  },
});
