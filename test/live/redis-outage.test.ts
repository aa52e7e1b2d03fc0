import { randomUUID } from 'node:crypto';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { EmbeddedPg } from '../../src/db/embedded/database.js';
import { setRunState, startRun } from '../../src/db/embedded/simulator.js';
import { PrivateRedis } from '../support/redis.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { WAIT_MS } from '../support/wait.js';
import {
  embeddedPg,
  metric,
  pollCycles,
  type Recorder,
  settled,
  subscribeWs,
  until,
  wsClient,
} from './support.js';

// A private redis-server, killed and paused here: the shared one at 127.0.0.1:6379 serves
// other tests at the same time and is never touched.
const INTERVAL = 100;
/** Past the snapshot's time-to-live in Redis (4 intervals, src/live/coordinator.ts) and the lock's. */
const OUTAGE_MS = 6 * INTERVAL;

let redis: PrivateRedis;
let t: TestServer;
let pg: EmbeddedPg;
let client: Client;
let changes: Recorder<Change>;

interface Change {
  teamRunChanged: { previousState: string | null; state: string; run: { execId: string } };
}

beforeAll(async () => {
  redis = await PrivateRedis.start();
  t = await startTestServer({
    REDIS_URL: redis.url,
    REDIS_PREFIX: `agentgraph-test:${randomUUID()}:`,
    POLL_INTERVAL_MS: String(INTERVAL),
    POLL_OVERLAP_MS: '300',
    // A claim that a paused Redis does not answer fails after an interval, not a second.
    REDIS_COMMAND_TIMEOUT_MS: String(INTERVAL),
  });
  pg = embeddedPg(t.server);
  client = wsClient(t.url);
  changes = subscribeWs<Change>(
    client,
    'subscription { teamRunChanged { previousState state run { execId } } }',
  );
  await settled(t.server, 1);
});

afterAll(async () => {
  changes?.close();
  await client?.dispose();
  await t?.stop();
  await redis?.stop();
});

const errorCycles = () => metric(t.server, 'agentgraph_poll_cycles_total', { outcome: 'error' });
const standbyCycles = () =>
  metric(t.server, 'agentgraph_poll_cycles_total', { outcome: 'standby' });

async function newRuns(count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID().replaceAll('-', '').toUpperCase());
  for (const execId of ids) {
    await startRun(pg, { owner: 'APP_USER', teamName: 'ORDER_SUPPORT_TEAM', execId });
  }
  return ids;
}

/** The transitions of these runs that subscribers received, as "execId previous→state". */
const received = (ids: readonly string[]) =>
  changes.data
    .map((c) => c.teamRunChanged)
    .filter((c) => ids.includes(c.run.execId))
    .map((c) => `${c.run.execId} ${c.previousState}→${c.state}`);

/**
 * Makes the runs' transitions while Redis is out past the snapshot's time-to-live in
 * Redis (4 intervals) and the lock's (1.5), then brings Redis back: every transition must arrive.
 */
async function acrossOutage(out: () => Promise<void> | void, back: () => Promise<void> | void) {
  const ids = await newRuns(10);
  await until(() => received(ids).length === 10, WAIT_MS, 'the 10 new runs');
  const standbyBefore = await standbyCycles();
  await out();
  const outSince = Date.now();
  const errorsBefore = await errorCycles();
  for (const [i, execId] of ids.entries()) {
    await setRunState(pg, execId, i % 2 === 0 ? 'SUCCEEDED' : 'WAITING_FOR_HUMAN');
  }
  // Three failed claims, and Redis out past the snapshot's time-to-live there and the lock's:
  // the length of the outage is what this test is about.
  await until(
    async () => (await errorCycles()) >= errorsBefore + 3 && Date.now() - outSince >= OUTAGE_MS,
    WAIT_MS,
    'failed claims through the outage',
  );
  await back();
  const expected = ids.map(
    (execId, i) => `${execId} RUNNING→${i % 2 === 0 ? 'SUCCEEDED' : 'WAITING_FOR_HUMAN'}`,
  );
  await until(() => received(ids).length >= 20, WAIT_MS, 'the transitions made during the outage');
  await pollCycles(t.server, 3);
  expect(received(ids).slice(10).sort()).toEqual(expected.sort());
  // The poller never found its own lock held by itself under an older token.
  expect(await standbyCycles()).toBe(standbyBefore);
}

describe('a Redis outage loses no event (issue 25, item 4)', () => {
  test('redis-server killed, then started again empty: every transition made meanwhile is reported', async () => {
    await acrossOutage(
      () => redis.kill(),
      () => redis.restart(),
    );
    expect(changes.completed || changes.errors.length > 0).toBe(false);
  });

  test('redis-server paused (SIGSTOP) and resumed: every transition is reported, no self-lockout', async () => {
    await acrossOutage(
      () => redis.pause(),
      () => redis.resume(),
    );
    expect(changes.completed || changes.errors.length > 0).toBe(false);
  });
});
