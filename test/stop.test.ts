import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestServer, type TestServer } from './support/server.js';

/**
 * Stopping is what happens on SIGTERM during a deploy. Every round trip is slowed down, so
 * that a request is reliably still running when stop() is called.
 */
const LATENCY_MS = 400;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ EMBEDDED_LATENCY_MS: String(LATENCY_MS) });
});
afterAll(() => t.stop());

test('stop() lets the running request finish, refuses new connections, then closes the database', async () => {
  const statementsBefore = await t.server.metrics.statementCount();
  const inFlight = t.post<{ agents: { totalCount: number } }>(
    '{ agents(first: 3) { totalCount } }',
  );
  // The request is in flight once its statement has been issued to the database.
  while ((await t.server.metrics.statementCount()) === statementsBefore) await sleep(5);

  const stopped = t.server.stop(10_000);
  await expect(fetch(`${t.url}/health`)).rejects.toThrow();

  const response = await inFlight;
  expect(response.status).toBe(200);
  expect(response.errors).toBeUndefined();
  expect(response.data?.agents.totalCount).toBeGreaterThan(0);

  // Once the last response is out, stop() is done: it does not wait for the 10 s drain
  // limit. How soon it is done is timed by `npm run bench` (bench/stop.ts).
  await stopped;
  expect(t.server.database.embedded?.pg.closed).toBe(true);
  await expect(fetch(`${t.url}/health`)).rejects.toThrow();
});
