import { randomUUID } from 'node:crypto';
import { applyJSONDiffPatch } from '@n1ru4l/graphql-live-query-patch-jsondiffpatch';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setRunState, startRun } from '../../src/db/embedded/simulator.js';
import { startTestServer, type TestServer } from '../support/server.js';
import {
  embeddedPg,
  goodCycles,
  metric,
  pollCycles,
  Recorder,
  subscribeSse,
  subscribeWs,
  until,
  wsClient,
} from './support.js';

const TEAM = 'REPORT_SUMMARY_AGENT_TEAM';
const INTERVAL = 150;

// One server polling often (the poller's invalidations), and three that poll once a minute:
// what reaches their live queries within a test came from a mutation, and each has its own
// flusher, so that one mutation's flush does not hold back the next test's.
let t: TestServer;
let quiet: TestServer[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  [t, ...quiet] = await Promise.all([
    startTestServer({ POLL_INTERVAL_MS: String(INTERVAL) }),
    ...[0, 1, 2].map(() => startTestServer({ POLL_INTERVAL_MS: '60000' })),
  ]);
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.dispose()));
  await Promise.all([t, ...quiet].map((server) => server.stop()));
});

const client = (server: TestServer = t) => {
  const c = wsClient(server.url);
  clients.push(c);
  return c;
};

/** A new run of TEAM in RUNNING, straight into the embedded tables (the poller has not seen it). */
async function newRun(server: TestServer, state?: 'WAITING_FOR_HUMAN'): Promise<string> {
  const pg = embeddedPg(server.server);
  const execId = randomUUID().replaceAll('-', '').toUpperCase();
  await startRun(pg, { owner: 'APP_USER', teamName: TEAM, execId });
  if (state) await setRunState(pg, execId, state);
  return execId;
}

interface RunAnswer {
  teamRun: { execId: string; state: string; tasks: { state: string }[] } | null;
}
const RUN = `query Run($id: ID!) @live { teamRun(execId: $id) { execId state tasks { state } } }`;
const last = <T>(recorder: Recorder<T>) => recorder.data.at(-1);

describe('invalidated by the poller', () => {
  test('over graphql-ws and SSE, within one poll cycle of the change', async () => {
    const execId = await newRun(t);
    const ws = subscribeWs<RunAnswer>(client(), RUN, { id: execId });
    const sse = await subscribeSse<RunAnswer>(t.url, RUN, { id: execId });
    await ws.take(1);
    await sse.take(1);
    expect(last(ws)?.teamRun?.state).toBe('RUNNING');
    expect(last(sse)).toEqual(last(ws));

    const flushes = () =>
      metric(t.server, 'agentgraph_live_query_flushes_total', { source: 'cycle' });
    // The poller has seen the new run (its flush is behind us).
    await pollCycles(t.server, 2);
    const before = await flushes();
    await setRunState(embeddedPg(t.server), execId, 'WAITING_FOR_HUMAN');
    await ws.until(() => last(ws)?.teamRun?.state === 'WAITING_FOR_HUMAN');
    await sse.until(() => last(sse)?.teamRun?.state === 'WAITING_FOR_HUMAN');
    // The first cycle that saw the change brought it: no later one was needed.
    expect(await flushes()).toBe(before + 1);
    expect(last(ws)?.teamRun?.tasks.at(-1)?.state).toBe('WAITING_FOR_HUMAN');
    expect(last(sse)).toEqual(last(ws));
    // A change is sent once: no answer repeats the one before it.
    expect(ws.events).toHaveLength(2);
    expect(await metric(t.server, 'agentgraph_live_queries')).toBe(2);
    ws.close();
    sse.close();
  });

  test('identical live queries share one execution per change', async () => {
    const execId = await newRun(t);
    const query = `query Shared($id: ID!) @live { teamRun(execId: $id) { execId state } }`;
    const executions = () =>
      metric(t.server, 'agentgraph_subscription_events_total', { operation: 'Shared' });
    const ws = client();
    const members = [subscribeWs<RunAnswer>(ws, query, { id: execId })];
    await members[0]?.take(1);
    // Once the poller has seen the new run, nothing else invalidates this run.
    await pollCycles(t.server, 2);
    const alone = await executions();
    for (let i = 0; i < 4; i++) members.push(subscribeWs<RunAnswer>(ws, query, { id: execId }));
    members.push(await subscribeSse<RunAnswer>(t.url, query, { id: execId }));
    for (const member of members) await member.take(1);
    // The others joined on the answer the first one has.
    expect(await executions()).toBe(alone);

    await setRunState(embeddedPg(t.server), execId, 'WAITING_FOR_HUMAN');
    for (const member of members) {
      await member.until(() => last(member)?.teamRun?.state === 'WAITING_FOR_HUMAN');
    }
    expect(await executions()).toBe(alone + 1);
    for (const member of members) member.close();
  });

  test('a change elsewhere does not run the query again', async () => {
    const [watched, other] = [await newRun(t), await newRun(t)];
    const query = `query Elsewhere($id: ID!) @live { teamRun(execId: $id) { execId state } }`;
    const executions = () =>
      metric(t.server, 'agentgraph_subscription_events_total', { operation: 'Elsewhere' });
    const live = subscribeWs<RunAnswer>(client(), query, { id: watched });
    await live.take(1);
    await pollCycles(t.server, 2);
    const before = await executions();
    await setRunState(embeddedPg(t.server), other, 'WAITING_FOR_HUMAN');
    // Once a cycle that started after the change has ended, its flush has happened.
    await pollCycles(t.server, 3);
    expect(await executions()).toBe(before);
    expect(live.events).toHaveLength(1);
    live.close();
  });
});

describe('invalidated by each mutation, before any poll cycle sees it', () => {
  test('respondToHuman: the run leaves its team’s waiting set', async () => {
    const server = quiet[0] as TestServer;
    const execId = await newRun(server, 'WAITING_FOR_HUMAN');
    const live = subscribeWs<{ team: { waitingForHuman: { execId: string }[] } }>(
      client(server),
      `query @live { team(name: "${TEAM}") { waitingForHuman { execId } } }`,
    );
    await live.take(1);
    expect(last(live)?.team.waitingForHuman.map((run) => run.execId)).toContain(execId);
    await until(async () => (await goodCycles(server.server)) >= 1);
    const cycles = await goodCycles(server.server);
    const { errors } = await server.post(
      'mutation($e: ID!) { respondToHuman(execId: $e, response: "approve") { execId } }',
      { e: execId },
    );
    expect(errors).toBeUndefined();
    await live.until(() => !last(live)?.team.waitingForHuman.some((run) => run.execId === execId));
    expect(await goodCycles(server.server)).toBe(cycles);
    live.close();
  });

  test('runTeam: the new run appears in the team’s runs', async () => {
    const server = quiet[1] as TestServer;
    const live = subscribeWs<{ teamRuns: { nodes: { tasks: { input: string | null }[] }[] } }>(
      client(server),
      `query @live { teamRuns(first: 3, filter: { teamName: "${TEAM}" }) { nodes { tasks { input } } } }`,
    );
    await live.take(1);
    const prompt = `Summarize ${randomUUID()}`;
    await until(async () => (await goodCycles(server.server)) >= 1);
    const cycles = await goodCycles(server.server);
    const { errors } = await server.post(
      `mutation($p: String!) { runTeam(teamName: "${TEAM}", prompt: $p) { conversationId } }`,
      { p: prompt },
    );
    expect(errors).toBeUndefined();
    await live.until(() =>
      Boolean(last(live)?.teamRuns.nodes.some((run) => run.tasks[0]?.input === prompt)),
    );
    expect(await goodCycles(server.server)).toBe(cycles);
    live.close();
  });

  test('executeAgent: the statistics count the execution', async () => {
    const server = quiet[2] as TestServer;
    const live = subscribeWs<{ execStatSummary: { executionCount: number } }>(
      client(server),
      'query @live { execStatSummary { executionCount } }',
    );
    const [first] = await live.take(1);
    // The first cycle (the poller's baseline) starts with the first live query.
    await until(async () => (await goodCycles(server.server)) >= 1);
    const cycles = await goodCycles(server.server);
    const { errors } = await server.post(
      `mutation { executeAgent(name: "REFUND_CHECKER", inputs: [
        { name: "order_id", value: "A-1001" }, { name: "amount", value: 25.5 },
        { name: "reason", value: "arrived broken" }]) { agentName } }`,
    );
    expect(errors).toBeUndefined();
    const before = first?.execStatSummary.executionCount ?? 0;
    await live.until(() => (last(live)?.execStatSummary.executionCount ?? 0) === before + 1);
    expect(await goodCycles(server.server)).toBe(cycles);
    live.close();
  });
});

describe('patches', () => {
  test('reapplied, they give the whole answer, in fewer bytes', async () => {
    const execId = await newRun(t);
    const query = `query Team @live { team(name: "${TEAM}") {
      name waitingForHuman { execId }
      runs(first: 20) { nodes { execId state startDate tasks { taskName state toolCalls { toolName } } } }
    } }`;
    const ws = client();
    const whole = subscribeWs<Record<string, unknown>>(ws, query);
    const patched = new PatchedRecorder(ws, query);
    await whole.take(1);
    await patched.recorder.take(1);
    await setRunState(embeddedPg(t.server), execId, 'WAITING_FOR_HUMAN');
    await whole.until(
      () => JSON.stringify(last(whole)).includes(execId) && whole.events.length >= 2,
    );
    await patched.recorder.until(() => patched.recorder.events.length >= whole.events.length);
    expect(patched.data).toEqual(last(whole));
    // And the answer is what the query answers now.
    expect(patched.data).toEqual((await t.gql(query.replace('@live', ''))).data);
    const [firstBytes, patchBytes] = patched.recorder.events.map((e) => JSON.stringify(e).length);
    expect(patchBytes).toBeLessThan((firstBytes as number) / 4);
    whole.close();
    patched.recorder.close();
  });

  test('an unknown patch format is BAD_USER_INPUT', async () => {
    const response = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        query: 'query @live { teams(first: 1) { nodes { name } } }',
        extensions: { liveQueryPatch: 'json-patch' },
      }),
    });
    const text = await response.text();
    expect(text).toContain('BAD_USER_INPUT');
    expect(text).toContain('liveQueryPatch');
  });
});

/** A live query asking for patches, with each patch applied as the store's client does. */
class PatchedRecorder {
  readonly recorder: Recorder<unknown>;
  data: unknown;
  private revision = 0;

  constructor(ws: Client, query: string) {
    let unsubscribe = () => {};
    this.recorder = new Recorder<unknown>(() => unsubscribe());
    unsubscribe = ws.subscribe(
      { query, extensions: { liveQueryPatch: 'jsondiffpatch' } },
      {
        next: (value) => {
          const message = value as { data?: unknown; patch?: unknown; revision?: number };
          expect(message.revision).toBe(this.revision + 1);
          this.revision = message.revision as number;
          this.data =
            message.revision === 1
              ? message.data
              : applyJSONDiffPatch(this.data as Record<string, unknown>, message.patch as never);
          this.recorder.push(value as never);
        },
        error: (error) => this.recorder.fail(error),
        complete: () => this.recorder.complete(),
      },
    );
  }
}

describe('the query’s limits and errors', () => {
  test('a document over the limits is refused as the query is', async () => {
    const deep = `query @live { teams { nodes { runs { nodes { tasks { toolCalls { task { run { tasks { toolCalls { task { run { execId } } } } } } } } } } } } }`;
    const plain = await t.post(deep.replace('@live', ''));
    const live = subscribeWs<unknown>(client(), deep);
    await live.until(() => live.errors.length > 0 || live.events.length > 0);
    const errors = (live.errors[0] ?? live.events[0]?.errors) as {
      extensions?: { code?: string };
    }[];
    expect(plain.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(errors?.[0]?.extensions?.code).toBe(plain.errors?.[0]?.extensions?.code);
  });

  test('an error in the answer is masked with its code, as the query’s', async () => {
    const query = 'query @live { team(name: "REPORT_SUMMARY_AGENT_TEAMS") { name } }';
    const plain = await t.post(query.replace('@live', ''));
    const live = subscribeWs<unknown>(client(), query);
    await live.take(1);
    expect(live.events[0]?.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(live.events[0]?.errors?.[0]?.message).toBe(plain.errors?.[0]?.message);
    live.close();
  });
});
