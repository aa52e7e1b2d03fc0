import { beforeAll, expect, test } from 'vitest';
import { subscribeSse } from './live/support.js';
import { startTestServer, type TestServer } from './support/server.js';
import { WAIT_MS } from './support/wait.js';

/**
 * SIGTERM while a dashboard is subscribed over SSE. The drain limit is far longer than the
 * test's timeout, and so is Node's keep-alive timeout (5 s) that used to end the wait for the
 * ended stream's idle connection: the test passes only if stop() returns because the stream
 * ended and its connection was closed at once.
 */
const DRAIN_MS = 600_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});

test(
  'stop() with an SSE subscriber connected ends the stream and returns without the drain timer',
  async () => {
    const waiting = await subscribeSse<{ teamsWaitingForHuman: unknown[] }>(
      t.url,
      'subscription { teamsWaitingForHuman { execId } }',
    );
    await waiting.take(1);
    await t.server.stop(DRAIN_MS);
    await waiting.until(() => waiting.completed, WAIT_MS, 'the stream to end');
    expect(waiting.errors).toEqual([]);
    await expect(fetch(`${t.url}/health`)).rejects.toThrow();
  },
  KEEP_ALIVE_TIMEOUT_MS - 1_000,
);
