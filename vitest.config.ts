import { defineConfig } from 'vitest/config';
import { WAIT_MS } from './test/support/wait.js';

// graphql 16 ships ESM and CJS builds; Node loads the CJS one for Pothos and Yoga, so the
// tests must use that one too, or graphql-js sees two copies of its classes.
const resolve = { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] };
// A test's and a hook's time limit only stops a hang: on the shared 2-core machine under load
// (two files at once, load 20) a server boot or a pass over every statement takes minutes,
// and a limit near that would fail what works. Waits inside a test are bounded by WAIT_MS.
// expect.poll waits for an event like any other wait (its own default is 1 s, which a busy
// machine misses).
const timeouts = {
  testTimeout: 180_000,
  hookTimeout: 180_000,
  expect: { poll: { timeout: WAIT_MS } },
};

/**
 * Files that change their process for others: they run each in a fresh one. Every other file
 * leaves its process as it found it (servers stopped in afterAll, spies restored), so those
 * share a worker and import the server's modules once per worker instead of once per file.
 */
const OWN_PROCESS = ['test/oracle/driver.test.ts'];

export default defineConfig({
  resolve,
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      {
        resolve,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: OWN_PROCESS,
          isolate: false,
          ...timeouts,
        },
      },
      {
        resolve,
        test: { name: 'own-process', include: OWN_PROCESS, isolate: true, ...timeouts },
      },
    ],
  },
});
