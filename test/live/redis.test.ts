import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { EmbeddedPg } from '../../src/db/embedded/database.js';
import { setRunState, startRun } from '../../src/db/embedded/simulator.js';
import { redisUrl } from '../support/redis.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { WAIT_MS } from '../support/wait.js';
import {
  embeddedPg,
  goodCycles,
  metric,
  pollCycles,
  pollStatements,
  runsIn,
  subscribeSse,
  subscribeWs,
  until,
  wsClient,
} from './support.js';

// Two instances share a real Redis (the one at 127.0.0.1:6379, or a private one that the
// global setup starts when none answers there), each with its own embedded database holding
// the same demo data; a fresh key prefix per run keeps parallel and earlier runs apart.
const REDIS_URL = redisUrl();
const INTERVAL = 300;

const servers: TestServer[] = [];
const clients: Client[] = [];
const children: ChildProcess[] = [];

const PREFIX = `agentgraph-test:${randomUUID()}:`;
let a: TestServer;
let b: TestServer;
let cutOff: TestServer;
let dying: { url: string; process: ChildProcess };

// Starting is the slow part (an embedded database each, and a child process), so it happens
// once, all at the same time. Until someone subscribes to it, an instance does not poll.
beforeAll(async () => {
  [a, b, dying, cutOff] = await Promise.all([
    instance(PREFIX),
    instance(PREFIX),
    spawnInstance(PREFIX),
    // Nothing listens on port 1: each claim fails on the command time-out, here an interval.
    startTestServer({
      ...env(PREFIX),
      REDIS_URL: 'redis://127.0.0.1:1',
      REDIS_COMMAND_TIMEOUT_MS: String(INTERVAL),
    }),
  ]);
  servers.push(cutOff);
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(clients.map((client) => client.dispose()));
  await Promise.all(servers.map((server) => server.stop()));
});

function env(prefix: string): Record<string, string> {
  return {
    REDIS_URL,
    REDIS_PREFIX: prefix,
    POLL_INTERVAL_MS: String(INTERVAL),
    SIMULATE: 'false',
  };
}

async function instance(prefix: string): Promise<TestServer> {
  const server = await startTestServer(env(prefix));
  servers.push(server);
  return server;
}

function client(url: string): Client {
  const c = wsClient(url);
  clients.push(c);
  return c;
}

const standbyTicks = (t: TestServer) =>
  metric(t.server, 'agentgraph_poll_cycles_total', { outcome: 'standby' });

interface Change {
  teamRunChanged: { previousState: string | null; state: string; run: { execId: string } };
}

const CHANGES = 'subscription { teamRunChanged { previousState state run { execId } } }';

/** The same change, at the same instant, in each instance's database. */
async function everywhere(
  pgs: EmbeddedPg[],
  change: (pg: EmbeddedPg) => Promise<void>,
): Promise<void> {
  for (const pg of pgs) await change(pg);
}

describe('several instances through Redis', () => {
  test('exactly one instance polls; a subscriber on the other sees its transitions; hand-over on stop', async () => {
    const pgs = [embeddedPg(a.server), embeddedPg(b.server)];

    const onA = subscribeWs<Change>(client(a.url), CHANGES);
    await until(() => a.server.live.polling, WAIT_MS, 'A to take the poll lock');
    await until(async () => (await goodCycles(a.server)) > 0);
    const onB = subscribeWs<Change>(client(b.url), CHANGES);
    const waitingOnB = await subscribeSse<{ teamsWaitingForHuman: { execId: string }[] }>(
      b.url,
      'subscription { teamsWaitingForHuman { execId } }',
    );
    // B joined late: its first waiting set comes from the snapshot A keeps in Redis.
    const [initial] = await waitingOnB.take(1);
    expect(initial?.teamsWaitingForHuman.map((run) => run.execId).sort()).toEqual(
      (await runsIn(pgs[1] as EmbeddedPg, 'WAITING_FOR_HUMAN')).map((run) => run.execId),
    );

    const aPolls = await pollStatements(a.server);
    const bStandby = await standbyTicks(b);
    await until(
      async () =>
        (await pollStatements(a.server)) >= aPolls + 3 && (await standbyTicks(b)) > bStandby,
      10_000,
      'A to poll and B to stand by',
    );
    expect(await pollStatements(b.server)).toBe(0);
    expect(b.server.live.polling).toBe(false);

    const execId = randomUUID().replaceAll('-', '').toUpperCase();
    const at = new Date();
    await everywhere(pgs, (pg) =>
      startRun(pg, { owner: 'APP_USER', teamName: 'ORDER_SUPPORT_TEAM', execId }, at),
    );
    const [created] = await onB.take(1);
    expect(created?.teamRunChanged).toEqual({
      previousState: null,
      state: 'RUNNING',
      run: { execId },
    });
    await everywhere(pgs, (pg) => setRunState(pg, execId, 'WAITING_FOR_HUMAN', at));
    const [, paused] = await onB.take(2);
    expect(paused?.teamRunChanged.state).toBe('WAITING_FOR_HUMAN');
    await waitingOnB.until(() =>
      waitingOnB.data.some((set) => set.teamsWaitingForHuman.some((run) => run.execId === execId)),
    );
    await onA.take(2);

    // A stops: it lets go of the lock and B carries on from A's snapshot.
    await a.stop();
    await until(() => b.server.live.polling, INTERVAL * 2, 'B to take over');
    await setRunState(pgs[1] as EmbeddedPg, execId, 'RESUMING');
    const [, , resumed] = await onB.take(3);
    expect(resumed?.teamRunChanged).toEqual({
      previousState: 'WAITING_FOR_HUMAN',
      state: 'RESUMING',
      run: { execId },
    });
    await pollCycles(b.server, 2);
    expect(onB.events).toHaveLength(3);
    expect(onA.events).toHaveLength(2);
    onB.close();
    waitingOnB.close();
    await until(() => !b.server.live.active, WAIT_MS, 'B to stop polling');
    // The next test starts from data that every instance shares.
    await pgs[1]?.query('DELETE FROM dba_ai_agent_team_history WHERE team_exec_id = $1', [execId]);
  });

  test('when the polling process dies, another takes over within two intervals, losing nothing', async () => {
    const onDying = subscribeWs<Change>(client(dying.url), CHANGES);
    await until(async () => (await childMetric(dying.url, 'ok')) > 0, WAIT_MS, 'the child to poll');

    const pg = embeddedPg(b.server);
    const onB = subscribeWs<Change>(client(b.url), CHANGES);
    const standby = await standbyTicks(b);
    await until(async () => (await standbyTicks(b)) >= standby + 3, WAIT_MS, 'B to stand by');
    const polls = await pollStatements(b.server);

    // A change that only B's database sees: the polling child cannot report it.
    const [run] = await runsIn(pg, 'RUNNING', 'REPORT_SUMMARY_AGENT_TEAM');
    await setRunState(pg, run?.execId as string, 'WAITING_FOR_HUMAN');
    const childCycles = await childMetric(dying.url, 'ok');
    await until(
      async () => (await childMetric(dying.url, 'ok')) >= childCycles + 2,
      WAIT_MS,
      'two more cycles of the child',
    );
    expect(onB.events).toHaveLength(0);

    const ticksAtKill = await standbyTicks(b);
    dying.process.kill('SIGKILL');
    expect(await pollStatements(b.server)).toBe(polls);
    await until(() => b.server.live.polling, WAIT_MS, 'B to take the expired lock');
    // The lock outlives its holder by 1.5 intervals and B tries every quarter interval, so B
    // takes over within 7 tries (a busy machine makes fewer, not more); bench times it.
    expect((await standbyTicks(b)) - ticksAtKill).toBeLessThanOrEqual(8);
    // B diffs against the dead poller's snapshot, so the change is reported, once.
    const [change] = await onB.take(1);
    expect(change?.teamRunChanged).toEqual({
      previousState: 'RUNNING',
      state: 'WAITING_FOR_HUMAN',
      run: { execId: run?.execId },
    });
    await pollCycles(b.server, 2);
    expect(onB.events).toHaveLength(1);
    expect(onDying.events).toHaveLength(0);
    onB.close();
  });
});

describe('without Redis', () => {
  test('subscriptions stay open, failures are counted, and the server still stops', async () => {
    const recorder = subscribeWs(client(cutOff.url), CHANGES);
    await until(
      async () =>
        (await metric(cutOff.server, 'agentgraph_poll_cycles_total', { outcome: 'error' })) >= 2,
      10_000,
      'failed lock claims',
    );
    expect(await metric(cutOff.server, 'agentgraph_active_subscriptions')).toBe(1);
    expect(cutOff.server.live.polling).toBe(false);
    expect(recorder.completed || recorder.errors.length > 0).toBe(false);
    await cutOff.stop();
    await recorder.until(() => recorder.completed || recorder.errors.length > 0);
  });
});

/**
 * An instance in its own process (so it can really die), on an ephemeral port, started the way
 * `npm start` starts one (scripts/run.mjs: compiled once, not through tsx's module hooks).
 */
async function spawnInstance(prefix: string): Promise<{ url: string; process: ChildProcess }> {
  const child = spawn(process.execPath, ['scripts/run.mjs', 'src/main.ts'], {
    cwd: new URL('../..', import.meta.url),
    env: { ...process.env, ...env(prefix), PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  // Waits for the ready line or the exit, however long a loaded machine takes to start it:
  // the hook's timeout bounds the wait.
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the child exited with ${code}`)));
    lines.on('line', (line) => {
      const entry = JSON.parse(line) as { url?: string; msg?: string };
      if (entry.msg?.startsWith('agent-graph ready') && entry.url) {
        resolve(entry.url.replace(/\/graphql$/, ''));
      }
    });
  });
  return { url, process: child };
}

async function childMetric(url: string, outcome: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`agentgraph_poll_cycles_total{outcome="${outcome}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}
