import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // graphql 16 ships ESM and CJS builds; Node loads the CJS one for Pothos and Yoga, so the
    // tests must use that one too, or graphql-js sees two copies of its classes.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // A test's and a hook's time limit only stops a hang: on the shared 2-core machine under
    // load (load 20) a server boot or a pass over every statement takes minutes, and a limit
    // near that would fail what works. Waits inside a test are bounded by WAIT_MS.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
  },
});
