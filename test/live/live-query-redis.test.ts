import { randomUUID } from 'node:crypto';
import type { Client } from 'graphql-ws';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { EmbeddedPg } from '../../src/db/embedded/database.js';
import { setRunState, startRun } from '../../src/db/embedded/simulator.js';
import { RedisCoordinator } from '../../src/live/coordinator.js';
import { runKey } from '../../src/live-queries/keys.js';
import { redisUrl } from '../support/redis.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { WAIT_MS } from '../support/wait.js';
import {
  embeddedPg,
  goodCycles,
  metric,
  pollStatements,
  subscribeWs,
  until,
  wsClient,
} from './support.js';

// Two instances per case share a real Redis (as test/live/redis.test.ts), each with its own
// embedded database holding the same demo data: a change is written to both, and only the
// instance that holds the poll lock reads its database in poll cycles.
const REDIS_URL = redisUrl();
const TEAM = 'REPORT_SUMMARY_AGENT_TEAM';

const servers: TestServer[] = [];
const clients: Client[] = [];
let polled: [TestServer, TestServer];
let acted: [TestServer, TestServer];

beforeAll(async () => {
  const pair = (interval: number) => {
    const env = {
      REDIS_URL,
      REDIS_PREFIX: `agentgraph-test:${randomUUID()}:`,
      POLL_INTERVAL_MS: String(interval),
    };
    return [startTestServer(env), startTestServer(env)] as const;
  };
  // The second pair polls once a minute: what reaches it within the test came from an action.
  const started = await Promise.all([...pair(300), ...pair(60_000)]);
  servers.push(...started);
  polled = [started[0], started[1]] as [TestServer, TestServer];
  acted = [started[2], started[3]] as [TestServer, TestServer];
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
  await Promise.all(servers.map((s) => s.stop()));
});

const client = (server: TestServer) => {
  const c = wsClient(server.url);
  clients.push(c);
  return c;
};

/** The same new run in each database, in `state`. */
async function sameRun(pgs: EmbeddedPg[], state: 'RUNNING' | 'WAITING_FOR_HUMAN') {
  const execId = randomUUID().replaceAll('-', '').toUpperCase();
  for (const pg of pgs) {
    await startRun(pg, { owner: 'APP_USER', teamName: TEAM, execId });
    if (state !== 'RUNNING') await setRunState(pg, execId, state);
  }
  return execId;
}

interface RunAnswer {
  teamRun: { state: string } | null;
}
const RUN = 'query Run($id: ID!) @live { teamRun(execId: $id) { state } }';

describe('two instances behind Redis', () => {
  test('what the one poller sees invalidates the live queries of the other', async () => {
    const [a, b] = polled;
    const pgs = [embeddedPg(a.server), embeddedPg(b.server)];
    const execId = await sameRun(pgs, 'RUNNING');
    // a's live query starts its poller first, so a holds the lock.
    const onA = subscribeWs<RunAnswer>(client(a), RUN, { id: execId });
    await onA.take(1);
    await until(() => a.server.live.polling, WAIT_MS, 'a polling');
    const onB = subscribeWs<RunAnswer>(client(b), RUN, { id: execId });
    await onB.take(1);
    const bPolls = await pollStatements(b.server);

    for (const pg of pgs) await setRunState(pg, execId, 'WAITING_FOR_HUMAN');
    await onB.until(() => onB.data.at(-1)?.teamRun?.state === 'WAITING_FOR_HUMAN', WAIT_MS);
    await onA.until(() => onA.data.at(-1)?.teamRun?.state === 'WAITING_FOR_HUMAN', WAIT_MS);
    expect(b.server.live.polling).toBe(false);
    expect(await pollStatements(b.server)).toBe(bPolls);
    expect(
      await metric(b.server, 'agentgraph_live_query_flushes_total', { source: 'cycle' }),
    ).toBeGreaterThan(0);
    onA.close();
    onB.close();
  });

  test('an action on one instance invalidates the live queries of the other', async () => {
    const [a, b] = acted;
    const pgs = [embeddedPg(a.server), embeddedPg(b.server)];
    const execId = await sameRun(pgs, 'WAITING_FOR_HUMAN');
    const onB = subscribeWs<RunAnswer>(client(b), RUN, { id: execId });
    await onB.take(1);
    expect(onB.data[0]?.teamRun?.state).toBe('WAITING_FOR_HUMAN');
    // b's database as the answer will leave it; b hears of it only through a's action.
    await setRunState(pgs[1] as EmbeddedPg, execId, 'RESUMING');
    // b polls (nobody else watches this pair): its first cycle, the baseline, is behind us.
    await until(async () => (await goodCycles(b.server)) >= 1, WAIT_MS, 'a first cycle');
    const cycleFlushes = await metric(b.server, 'agentgraph_live_query_flushes_total', {
      source: 'cycle',
    });
    const { errors } = await a.post(
      'mutation($e: ID!) { respondToHuman(execId: $e, response: "approve") { execId } }',
      { e: execId },
    );
    expect(errors).toBeUndefined();
    await onB.until(() => onB.data.at(-1)?.teamRun?.state === 'RESUMING', WAIT_MS);
    expect(await metric(b.server, 'agentgraph_live_query_flushes_total', { source: 'cycle' })).toBe(
      cycleFlushes,
    );
    expect(
      await metric(b.server, 'agentgraph_live_query_flushes_total', { source: 'action' }),
    ).toBe(1);
    onB.close();
  });
});

describe('one run per live query per poll interval', () => {
  test('an action just before a cycle that sees the same change: the second run waits for the interval', async () => {
    const interval = 3_000;
    const prefix = `agentgraph-test:${randomUUID()}:`;
    // This test is the instance that polls: it holds the lock and publishes the cycles, so
    // that a cycle comes exactly when it wants (the server only relays them).
    const poller = new RedisCoordinator({
      url: REDIS_URL,
      prefix,
      intervalMs: 600_000,
      commandTimeoutMs: 1_000,
      logger: pino({ level: 'silent' }),
    });
    const token = randomUUID();
    expect(await poller.claim(token)).not.toBe(0);
    const t = await startTestServer({
      REDIS_URL,
      REDIS_PREFIX: prefix,
      POLL_INTERVAL_MS: String(interval),
    });
    servers.push(t);
    try {
      const pg = embeddedPg(t.server);
      const execId = await sameRun([pg], 'RUNNING');
      const live = subscribeWs<RunAnswer>(client(t), RUN, { id: execId });
      await live.take(1);
      const executions = () =>
        metric(t.server, 'agentgraph_subscription_events_total', { operation: 'Run' });
      const before = await executions();

      // An action: the run waits for a human, and the live query runs at once.
      await setRunState(pg, execId, 'WAITING_FOR_HUMAN');
      await t.server.live.invalidate([runKey(execId)]);
      await live.until(() => live.data.at(-1)?.teamRun?.state === 'WAITING_FOR_HUMAN');
      const acted = live.events.at(-1)?.at as number;

      // The run moves on, and a poll cycle reports it straight after.
      await setRunState(pg, execId, 'RUNNING');
      const polledAt = new Date().toISOString();
      const run = {
        execId,
        teamName: TEAM,
        owner: 'APP_USER',
        state: 'RUNNING' as const,
        startDate: polledAt,
        endDate: null,
        instanceId: null,
        waitingSince: null,
      };
      const epoch = randomUUID();
      expect(
        await poller.commit(
          token,
          null,
          { epoch, seq: 1, polledAt, runs: [run] },
          { epoch, seq: 1, polledAt, transitions: [{ run, previousState: null }], waiting: [] },
        ),
      ).toBe(true);
      await until(
        async () =>
          (await metric(t.server, 'agentgraph_live_query_flushes_total', { source: 'cycle' })) > 0,
        10_000,
        'the cycle flushed',
      );
      // The cycle's run comes one interval after the action's (it would have come at once),
      // and it does come: the answer is never older than the interval.
      await live.until(() => live.data.at(-1)?.teamRun?.state === 'RUNNING');
      const polled = live.events.at(-1)?.at as number;
      expect(polled - acted).toBeGreaterThanOrEqual(interval / 2);
      expect(await executions()).toBe(before + 2);
      live.close();
    } finally {
      await poller.release(token);
      await poller.close();
    }
  });
});
