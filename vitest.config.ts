import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // Node resolves `graphql` to its CommonJS build (graphql@16 has no "exports"), and so do
    // Yoga and Pothos; Vite would pick the "module" build for our own files. Two copies break
    // `instanceof GraphQLError`, so tests use the one Node uses.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/**'],
    // Installs Debian's redis-server for the shared-cache suites when it is missing and it can;
    // builds dist/ for the suites that start `node dist/main.js`.
    globalSetup: ['test/setup/ensure-redis-server.ts', 'test/setup/build-dist.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
