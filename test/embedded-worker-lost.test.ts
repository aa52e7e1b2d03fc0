import { afterAll, beforeAll, expect, test } from 'vitest';
import { PGliteThread } from '../src/db/embedded/worker.js';
import { startTestServer, type TestServer } from './support/server.js';

/**
 * A dead embedded-database worker thread (issue 25 item 5): this file kills its server's
 * worker thread, so it has a server of its own, on the worker (EMBEDDED_WORKER, the default).
 */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ EMBEDDED_WORKER: 'true' }, { ownDatabase: true });
});
afterAll(() => t.stop());

test('a worker thread that exits is logged once with its exit code, and /health turns 503', async () => {
  const pg = t.server.database.embedded?.pg;
  if (!(pg instanceof PGliteThread)) throw new Error('the test server runs PGlite in a worker');
  expect((await fetch(`${t.url}/health`)).status).toBe(200);

  const exitCode = await pg.worker.terminate();
  const lost = await t.server.databaseLost;
  expect(lost.exitCode).toBe(exitCode);

  const lines = t.logs.filter((entry) => entry.exitCode !== undefined);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 50, exitCode });
  expect(lines[0]?.msg).toContain(`exited with code ${exitCode}`);

  const health = await fetch(`${t.url}/health`);
  expect(health.status).toBe(503);
  expect(await health.json()).toEqual({ status: 'database lost' });
  expect((await fetch(`${t.url}/ready`)).status).toBe(503);
  const { errors } = await t.post('{ teams(first: 1) { totalCount } }');
  expect(errors?.[0]?.extensions?.code).toBe('INTERNAL');
  // A second failing query logs its own error, never a second "exited" line.
  expect(t.logs.filter((entry) => entry.exitCode !== undefined)).toHaveLength(1);
});
