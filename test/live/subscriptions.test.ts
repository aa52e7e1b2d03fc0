import { randomUUID } from 'node:crypto';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import type { EmbeddedPg } from '../../src/db/embedded/database.js';
import { setRunState, startRun } from '../../src/db/embedded/simulator.js';
import { CONNECTION_INIT_WAIT_TIMEOUT_MS } from '../../src/transport/websocket.js';
import { type RawMessage, RawSocket } from '../security/raw-ws.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { WAIT_MS } from '../support/wait.js';
import {
  activeSubscriptions,
  embeddedPg,
  goodCycles,
  metric,
  otherStatements,
  pollCycles,
  pollStatements,
  type Recorder,
  runsIn,
  settled,
  subscribeSse,
  subscribeWs,
  until,
  wsClient,
  wsUrl,
} from './support.js';

const INTERVAL = 150;
const REPORT = 'REPORT_SUMMARY_AGENT_TEAM';
const ORDER = 'ORDER_SUPPORT_TEAM';

let t: TestServer;
let pg: EmbeddedPg;
const clients: Client[] = [];
/** A socket that never sends connection_init, opened first so its timeout runs meanwhile. */
let silent: { openedAt: number; closed: Promise<{ code: number; at: number }> };

beforeAll(async () => {
  t = await startTestServer({ POLL_INTERVAL_MS: String(INTERVAL) });
  pg = embeddedPg(t.server);
  const socket = new WebSocket(wsUrl(t.url), 'graphql-transport-ws');
  const closed = new Promise<{ code: number; at: number }>((resolve) =>
    socket.on('close', (code) => resolve({ code, at: Date.now() })),
  );
  await new Promise((resolve) => socket.on('open', resolve));
  silent = { openedAt: Date.now(), closed };
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.dispose()));
  await t.stop();
});

function client(): Client {
  const c = wsClient(t.url);
  clients.push(c);
  return c;
}

/** A new RUNNING run of an APP_USER team, created before anyone subscribes to it. */
async function newRun(teamName: string): Promise<string> {
  const execId = randomUUID().replaceAll('-', '').toUpperCase();
  await startRun(pg, { owner: 'APP_USER', teamName, execId });
  return execId;
}

interface Change {
  teamRunChanged: {
    previousState: string | null;
    state: string;
    run: { execId: string; teamName: string; state: string };
  };
}

const CHANGES = `subscription($filter: TeamRunChangeFilter) {
  teamRunChanged(filter: $filter) { previousState state run { execId teamName state } }
}`;

/** Cycles observed by the cycle-duration histogram. */
async function timedCycles(): Promise<number> {
  const { values } = await t.server.metrics.pollCycleDuration.get();
  return values.find((v) => v.metricName === 'agentgraph_poll_cycle_duration_seconds_count')
    ?.value as number;
}

async function closeAll(...recorders: Recorder<unknown>[]): Promise<void> {
  for (const recorder of recorders) recorder.close();
  await until(async () => (await activeSubscriptions(t.server)) === 0, WAIT_MS, 'no subscriptions');
}

describe('teamRunChanged', () => {
  test('a transition reaches WebSocket and SSE subscribers within one poll interval', async () => {
    const execId = await newRun(REPORT);
    const ws = subscribeWs<Change>(client(), CHANGES, { filter: { teamName: REPORT } });
    const sse = await subscribeSse<Change>(t.url, CHANGES, { filter: { teamName: REPORT } });
    await settled(t.server, 2);

    const cyclesBefore = await goodCycles(t.server);
    await setRunState(pg, execId, 'WAITING_FOR_HUMAN');
    const [viaWs] = await ws.take(1);
    const [viaSse] = await sse.take(1);
    // Reported by the first cycle that starts after the change (one may be under way);
    // how long that takes is bench's to measure.
    expect((await goodCycles(t.server)) - cyclesBefore).toBeLessThanOrEqual(2);
    const expected = {
      previousState: 'RUNNING',
      state: 'WAITING_FOR_HUMAN',
      run: { execId, teamName: REPORT, state: 'WAITING_FOR_HUMAN' },
    };
    expect(viaWs?.teamRunChanged).toEqual(expected);
    expect(viaSse?.teamRunChanged).toEqual(expected);
    await closeAll(ws, sse);
  });

  test('filters by team and by new state; new runs are events too', async () => {
    const report = await newRun(REPORT);
    const order = await newRun(ORDER);
    const byTeam = subscribeWs<Change>(client(), CHANGES, { filter: { teamName: REPORT } });
    const ended = subscribeWs<Change>(client(), CHANGES, {
      filter: { states: ['SUCCEEDED', 'FAILED'] },
    });
    const both = await subscribeSse<Change>(t.url, CHANGES, {
      filter: { teamName: REPORT, states: ['WAITING_FOR_HUMAN'] },
    });
    const all = subscribeWs<Change>(client(), CHANGES);
    await settled(t.server, 4);

    await setRunState(pg, report, 'WAITING_FOR_HUMAN');
    await setRunState(pg, order, 'SUCCEEDED');
    const started = await newRun(REPORT);
    await all.take(3);
    await pollCycles(t.server, 2);

    const seen = (r: Recorder<Change>) =>
      r.data.map((d) => `${d.teamRunChanged.run.execId}:${d.teamRunChanged.state}`).sort();
    expect(seen(all)).toEqual(
      [`${report}:WAITING_FOR_HUMAN`, `${order}:SUCCEEDED`, `${started}:RUNNING`].sort(),
    );
    expect(seen(byTeam)).toEqual([`${report}:WAITING_FOR_HUMAN`, `${started}:RUNNING`].sort());
    expect(seen(ended)).toEqual([`${order}:SUCCEEDED`]);
    expect(seen(both)).toEqual([`${report}:WAITING_FOR_HUMAN`]);
    const fresh = all.data.find((d) => d.teamRunChanged.run.execId === started);
    expect(fresh?.teamRunChanged.previousState).toBeNull();
    await closeAll(byTeam, ended, both, all);
  });

  test('nested fields are loaded for each event, not cached from an earlier one', async () => {
    const execId = await newRun(REPORT);
    type Nested = {
      teamRunChanged: {
        state: string;
        run: {
          tasks: { taskName: string; state: string }[];
          toolCalls: { toolName: string; endDate: string | null }[];
        };
      };
    };
    const recorder = subscribeWs<Nested>(
      client(),
      `subscription($filter: TeamRunChangeFilter) { teamRunChanged(filter: $filter) {
        state run { tasks { taskName state } toolCalls { toolName endDate } } } }`,
      { filter: { teamName: REPORT } },
    );
    await settled(t.server, 1);

    await setRunState(pg, execId, 'WAITING_FOR_HUMAN');
    await recorder.take(1);
    await setRunState(pg, execId, 'RESUMING');
    const [first, second] = await recorder.take(2);

    const lastTask = (event: Nested | undefined) => event?.teamRunChanged.run.tasks.at(-1);
    const review = (event: Nested | undefined) =>
      event?.teamRunChanged.run.toolCalls.find((call) => call.toolName === 'HUMAN_REVIEW');
    expect(lastTask(first)).toEqual({
      taskName: 'REVIEW_SUMMARY_TASK',
      state: 'WAITING_FOR_HUMAN',
    });
    expect(review(first)?.endDate).toBeNull();
    // Read again at the second event: the task moved on and the human answered.
    expect(lastTask(second)).toEqual({ taskName: 'REVIEW_SUMMARY_TASK', state: 'RESUMING' });
    expect(review(second)?.endDate).not.toBeNull();
    await closeAll(recorder);
  });
});

describe('teamsWaitingForHuman', () => {
  type Waiting = {
    teamsWaitingForHuman: {
      execId: string;
      teamName: string;
      startDate: string | null;
      waitingSince: string | null;
      run: { state: string; tasks: { state: string }[] };
    }[];
  };
  const WAITING = `subscription($team: String) { teamsWaitingForHuman(teamName: $team) {
    execId teamName startDate waitingSince run { state tasks { state } } } }`;
  const ids = (waiting: Waiting | undefined) =>
    (waiting?.teamsWaitingForHuman.map((run) => run.execId) ?? []).sort();

  test('sends the current set on subscribe, then the whole set each time it changes', async () => {
    const newcomer = await newRun(ORDER);
    const ws = subscribeWs<Waiting>(client(), WAITING, { team: ORDER });
    const sse = await subscribeSse<Waiting>(t.url, WAITING, { team: ORDER });
    const [initial] = await ws.take(1);
    const [initialSse] = await sse.take(1);
    const before = (await runsIn(pg, 'WAITING_FOR_HUMAN', ORDER)).map((run) => run.execId);
    expect(before.length).toBeGreaterThan(0);
    expect(ids(initial)).toEqual(before);
    expect(ids(initialSse)).toEqual(before);
    expect(initial?.teamsWaitingForHuman.every((run) => run.teamName === ORDER)).toBe(true);
    expect(initial?.teamsWaitingForHuman.every((run) => run.waitingSince !== null)).toBe(true);

    const pausedAt = new Date();
    await setRunState(pg, newcomer, 'WAITING_FOR_HUMAN', pausedAt);
    const [, added] = await ws.take(2);
    expect(ids(added)).toEqual([...before, newcomer].sort());
    const entry = added?.teamsWaitingForHuman.find((run) => run.execId === newcomer);
    // The open HUMAN tool call starts when the run pauses.
    expect(entry?.waitingSince).toBe(pausedAt.toISOString());
    expect(entry?.run.state).toBe('WAITING_FOR_HUMAN');
    expect(entry?.run.tasks.at(-1)?.state).toBe('WAITING_FOR_HUMAN');

    // A change of another team's waiting set is not an event for this one.
    const [other] = await runsIn(pg, 'RUNNING', REPORT);
    if (other) await setRunState(pg, other.execId, 'WAITING_FOR_HUMAN');
    const [leaving] = before;
    await setRunState(pg, leaving as string, 'RESUMING');
    const [, , removed] = await ws.take(3);
    expect(ids(removed)).toEqual([...before.slice(1), newcomer].sort());
    await sse.take(3);
    await pollCycles(t.server, 2);
    expect(ws.events).toHaveLength(3);
    expect(sse.events).toHaveLength(3);
    await closeAll(ws, sse);
  });
});

describe('cost and clean-up', () => {
  test('200 concurrent subscribers cost one poll statement per cycle', async () => {
    const execId = await newRun(REPORT);
    const recorders: Recorder<unknown>[] = [];
    try {
      for (let c = 0; c < 15; c++) {
        const shared = client();
        for (let s = 0; s < 10; s++) recorders.push(subscribeWs(shared, CHANGES));
      }
      for (let s = 0; s < 50; s++) {
        const sse = await subscribeSse(
          t.url,
          'subscription { teamsWaitingForHuman { execId waitingSince } }',
        );
        recorders.push(sse);
        await sse.take(1);
      }
      await settled(t.server, 200);

      const othersBefore = await otherStatements(t.server);
      const pollsBefore = await pollStatements(t.server);
      const cyclesBefore = await goodCycles(t.server);
      const timedBefore = await timedCycles();
      await pollCycles(t.server, 5);
      const counts = recorders.map((recorder) => recorder.events.length);
      await setRunState(pg, execId, 'WAITING_FOR_HUMAN');
      await Promise.all(recorders.map((recorder, i) => recorder.take((counts[i] ?? 0) + 1)));

      const polls = (await pollStatements(t.server)) - pollsBefore;
      const cycles = (await goodCycles(t.server)) - cyclesBefore;
      // One statement per cycle, not one per subscriber. A cycle may be under way at the first
      // reading or the last (its statement is counted when sent, the cycle when it ends, and
      // it is timed just after), so each count may be one ahead of the other.
      expect(polls).toBeGreaterThanOrEqual(5);
      expect(Math.abs(polls - cycles)).toBeLessThanOrEqual(1);
      expect(Math.abs((await timedCycles()) - timedBefore - cycles)).toBeLessThanOrEqual(1);
      // And no other statement at all: the events are drawn from the poll's rows.
      expect((await otherStatements(t.server)) - othersBefore).toBe(0);
    } finally {
      await closeAll(...recorders);
    }
  });

  test('subscribers of the same subscription share one execution per event', async () => {
    const NESTED = `subscription($filter: TeamRunChangeFilter) { teamRunChanged(filter: $filter) {
      state run { execId tasks { taskName state } toolCalls { toolName } } } }`;
    const variables = { filter: { teamName: REPORT } };
    type Nested = Change & { teamRunChanged: { run: { tasks: unknown[] } } };
    const reached = (recorders: Recorder<Nested>[], execId: string, state: string) =>
      Promise.all(
        recorders.map((recorder) =>
          recorder.until(() =>
            recorder.data.some(
              (d) => d.teamRunChanged.run.execId === execId && d.teamRunChanged.state === state,
            ),
          ),
        ),
      );
    /** Statements other than the poll's until one change has reached every recorder. */
    const nestedStatements = async (recorders: Recorder<Nested>[]) => {
      const execId = await newRun(REPORT);
      // The new run is an event too: its statements must be over before counting.
      await reached(recorders, execId, 'RUNNING');
      const before = await otherStatements(t.server);
      await setRunState(pg, execId, 'WAITING_FOR_HUMAN');
      await reached(recorders, execId, 'WAITING_FOR_HUMAN');
      return (await otherStatements(t.server)) - before;
    };

    const alone = [subscribeWs<Nested>(client(), NESTED, variables)];
    const many: Recorder<Nested>[] = [];
    try {
      await settled(t.server, 1);
      const single = await nestedStatements(alone);
      alone[0]?.close();
      for (let c = 0; c < 10; c++) {
        const shared = client();
        for (let s = 0; s < 3; s++) many.push(subscribeWs<Nested>(shared, NESTED, variables));
      }
      await settled(t.server, 30);
      expect(single).toBeGreaterThan(0);
      expect(await nestedStatements(many)).toBe(single);
      // And every one of them received the same data.
      const last = many.map((recorder) => JSON.stringify(recorder.events.at(-1)?.data));
      expect(new Set(last).size).toBe(1);
    } finally {
      await closeAll(...alone, ...many);
    }
  });

  test('a fan-out over several batches reaches every subscriber, in order, in its own shape', async () => {
    const ALIASED = `subscription($filter: TeamRunChangeFilter) {
      change: teamRunChanged(filter: $filter) { run { id: execId } now: state } }`;
    const variables = { filter: { teamName: REPORT } };
    const execId = await newRun(REPORT);
    // More subscriptions than one batch of the hub's fan-out (500).
    const many: Recorder<Change>[] = [];
    for (let c = 0; c < 60; c++) {
      const shared = client();
      for (let s = 0; s < 10; s++) many.push(subscribeWs<Change>(shared, CHANGES, variables));
    }
    type Aliased = { change: { run: { id: string }; now: string } };
    const aliased = subscribeWs<Aliased>(client(), ALIASED, variables);
    try {
      await settled(t.server, 601);
      const fanOuts = async () =>
        (await t.server.metrics.liveFanOutDuration.get()).values.find(
          (v) => v.metricName === 'agentgraph_live_fanout_seconds_count',
        )?.value ?? 0;
      const fanOutsBefore = await fanOuts();
      const mine = (d: Change) => d.teamRunChanged.run.execId === execId;
      await setRunState(pg, execId, 'WAITING_FOR_HUMAN');
      await Promise.all(many.map((r) => r.until(() => r.data.some(mine), 30_000)));
      await setRunState(pg, execId, 'RUNNING');
      await Promise.all(many.map((r) => r.until(() => r.data.filter(mine).length === 2, 30_000)));
      await aliased.until(
        () => aliased.data.filter((d) => d.change.run.id === execId).length === 2,
      );

      const states = new Set(
        many.map((r) =>
          JSON.stringify(
            r.data
              .filter(mine)
              .map((d) => [d.teamRunChanged.previousState, d.teamRunChanged.state]),
          ),
        ),
      );
      expect([...states]).toEqual([
        JSON.stringify([
          ['RUNNING', 'WAITING_FOR_HUMAN'],
          ['WAITING_FOR_HUMAN', 'RUNNING'],
        ]),
      ]);
      expect(aliased.data.filter((d) => d.change.run.id === execId)).toEqual([
        { change: { run: { id: execId }, now: 'WAITING_FOR_HUMAN' } },
        { change: { run: { id: execId }, now: 'RUNNING' } },
      ]);
      // Each fan-out is timed once it is over, just after its last sends.
      await until(
        async () => (await fanOuts()) >= fanOutsBefore + 2,
        WAIT_MS,
        'two timed fan-outs',
      );
    } finally {
      await closeAll(...many, aliased);
    }
  });

  test('closing subscriptions and connections ends the poller; no timer is left', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const baseline = timers();
    const own = wsClient(t.url);
    const first = subscribeWs(own, CHANGES);
    subscribeWs(own, 'subscription { teamsWaitingForHuman { execId } }');
    const sse = await subscribeSse(t.url, CHANGES);
    await settled(t.server, 3);
    expect(t.server.live.polling).toBe(true);

    // complete (unsubscribe) on a connection that stays open
    first.close();
    await until(async () => (await activeSubscriptions(t.server)) === 2);
    // the client goes away: its socket closes, and the SSE request is aborted
    await own.dispose();
    sse.close();
    await until(async () => (await activeSubscriptions(t.server)) === 0);
    await until(() => !t.server.live.active, WAIT_MS, 'the live session to stop');
    expect(t.server.live.polling).toBe(false);

    // No timer left means no cycle to come.
    const cycles = await goodCycles(t.server);
    await until(() => timers() <= baseline, WAIT_MS, 'timers to be cleared');
    expect(await goodCycles(t.server)).toBe(cycles);
  });
});

describe('events written to many sockets in one loop', () => {
  /** The runs' changes that reached subscription `id` of `raw`, in order. */
  const changesOf = (raw: RawSocket, id: string, execId: string) =>
    raw.messages
      .filter((m: RawMessage) => m.type === 'next' && m.id === id)
      .map((m) => (m.payload as { data: Change }).data.teamRunChanged)
      .filter((change) => change.run.execId === execId)
      .map((change) => [change.previousState, change.state]);

  /**
   * Runs `test` with one socket holding two identical subscriptions under these ids, then
   * closes it and waits for the server to count them no more.
   */
  async function onOneSocket(ids: [string, string], test: (raw: RawSocket) => Promise<void>) {
    const raw = await RawSocket.connect(wsUrl(t.url));
    const before = await activeSubscriptions(t.server);
    for (const id of ids) raw.subscribe(id, CHANGES, { filter: { teamName: REPORT } });
    try {
      await settled(t.server, before + 2);
      await test(raw);
    } finally {
      raw.terminate();
      await until(async () => (await activeSubscriptions(t.server)) === before);
    }
  }

  test('two identical subscriptions on one socket each get every event under their own id', () =>
    onOneSocket(['first', 'second'], async (raw) => {
      const execId = await newRun(REPORT);
      const both = (count: number) => () =>
        ['first', 'second'].every((id) => changesOf(raw, id, execId).length >= count);
      // Each change waits for the previous one's event: one poll would see both as one.
      await raw.next(both(1));
      await setRunState(pg, execId, 'WAITING_FOR_HUMAN');
      await raw.next(both(2));
      const expected = [
        [null, 'RUNNING'],
        ['RUNNING', 'WAITING_FOR_HUMAN'],
      ];
      expect(changesOf(raw, 'first', execId)).toEqual(expected);
      expect(changesOf(raw, 'second', execId)).toEqual(expected);
    }));

  test('a subscription completed on an open socket gets nothing more; its neighbour does', () =>
    onOneSocket(['leaves', 'stays'], async (raw) => {
      const before = await activeSubscriptions(t.server);
      const execId = await newRun(REPORT);
      const stays = (count: number) => () => changesOf(raw, 'stays', execId).length === count;
      await raw.next(stays(1));
      expect(changesOf(raw, 'leaves', execId)).toHaveLength(1);
      raw.send({ type: 'complete', id: 'leaves' });
      // Until the server has read the complete message, events may still go out to it.
      await until(async () => (await activeSubscriptions(t.server)) === before - 1);
      await setRunState(pg, execId, 'WAITING_FOR_HUMAN');
      await raw.next(stays(2));
      await setRunState(pg, execId, 'RUNNING');
      await raw.next(stays(3));
      // Messages on one socket arrive in the order they were sent, and the two share each
      // event: a late message to the completed one would have come before the neighbour's.
      expect(changesOf(raw, 'leaves', execId)).toEqual([[null, 'RUNNING']]);
      expect(raw.messages.filter((m) => m.id === 'leaves' && m.type !== 'next')).toEqual([]);
    }));
});

describe('graphql-ws transport', () => {
  test('speaks only graphql-transport-ws and drops clients that never initialise', async () => {
    // The legacy subscriptions-transport-ws protocol is refused at the handshake...
    const legacy = new WebSocket(wsUrl(t.url), 'graphql-ws');
    const refusal = await new Promise<string>((resolve) =>
      legacy.on('error', (error) => resolve(error.message)),
    );
    expect(refusal).toBe('Server sent no subprotocol');
    // ...and a socket without a subprotocol is closed with 4406.
    const bare = new WebSocket(wsUrl(t.url));
    expect(await new Promise<number>((resolve) => bare.on('close', resolve))).toBe(4406);

    const { code, at } = await silent.closed;
    expect(code).toBe(4408);
    expect(at - silent.openedAt).toBeGreaterThanOrEqual(CONNECTION_INIT_WAIT_TIMEOUT_MS - 100);
  });

  test('errors over WebSocket carry the same codes as over HTTP', async () => {
    const c = client();
    const invalid = subscribeWs(
      c,
      'subscription { teamRunChanged(filter: { states: [SLEEPING] }) { state } }',
    );
    await invalid.until(() => invalid.errors.length > 0);
    expect(invalid.errors[0]).toEqual([
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }) }),
    ]);
    const query = subscribeWs<{ team: null }>(c, '{ team(name: "NO_SUCH_TEAM") { name } }');
    await query.take(1);
    expect(query.events[0]?.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const sse = await subscribeSse(
      t.url,
      'subscription { teamRunChanged(filter: { states: [SLEEPING] }) { state } }',
    );
    await sse.take(1);
    expect(sse.events[0]?.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(
      await metric(t.server, 'agentgraph_graphql_errors_total', { code: 'BAD_USER_INPUT' }),
    ).toBeGreaterThanOrEqual(2);
  });

  test('errors over WebSocket carry no extensions.http, yoga’s note to its HTTP responses', async () => {
    const deep = `{ team(name: "ORDER_SUPPORT_TEAM") { ${'runs(first: 1) { nodes { team { '.repeat(6)} name ${'} } } '.repeat(6)}} }`;
    // Over HTTP yoga reads its status from extensions.http, then drops it from the body.
    for (const query of ['{ agents { colour } }', '{ agents {', deep]) {
      const response = await fetch(`${t.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
      const body = (await response.json()) as { errors: { extensions: object }[] };
      expect(body.errors[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT' });

      const c = client();
      const ws = subscribeWs(c, query);
      await ws.until(() => ws.errors.length > 0 || ws.events.length > 0);
      const errors = (ws.errors[0] ?? ws.events[0]?.errors) as { extensions?: object }[];
      expect(errors.length, query).toBeGreaterThan(0);
      for (const error of errors)
        expect(error.extensions, query).toEqual({ code: 'BAD_USER_INPUT' });
    }
  });
});

describe('shutdown', () => {
  test('server.stop() closes WebSocket clients, ends SSE streams and stops the poller', async () => {
    const socketClosed = new Promise<number>((resolve) => {
      const c = wsClient(t.url);
      clients.push(c);
      c.on('closed', (event) => resolve((event as { code: number }).code));
      subscribeWs(c, CHANGES);
    });
    const sse = await subscribeSse(t.url, CHANGES);
    await settled(t.server, 2);
    await t.stop();
    expect(await socketClosed).toBe(1001);
    await sse.until(() => sse.completed);
    expect(t.server.live.active).toBe(false);
    expect(await activeSubscriptions(t.server)).toBe(0);
  });
});
