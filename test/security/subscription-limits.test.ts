import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { EmbeddedPg } from '../../src/db/embedded/database.js';
import { setRunState, startRun } from '../../src/db/embedded/simulator.js';
import {
  activeSubscriptions,
  embeddedPg,
  otherStatements,
  settled,
  subscribeSse,
  until,
  wsUrl,
} from '../live/support.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { type RawMessage, RawSocket } from './raw-ws.js';

const TEAM = 'REPORT_SUMMARY_AGENT_TEAM';
const WAITING = 'subscription { teamsWaitingForHuman { execId } }';

let t: TestServer;
let capped: TestServer;
let pg: EmbeddedPg;
const sockets: RawSocket[] = [];
beforeAll(async () => {
  [t, capped] = await Promise.all([
    startTestServer({ POLL_INTERVAL_MS: '100' }),
    startTestServer({ MAX_SUBSCRIPTIONS_PER_SOCKET: '3', MAX_SUBSCRIPTIONS_PER_VIEWER: '5' }),
  ]);
  pg = embeddedPg(t.server);
});
afterAll(async () => {
  for (const socket of sockets) socket.terminate();
  await Promise.all([t.stop(), capped.stop()]);
});

async function connect(server: TestServer): Promise<RawSocket> {
  const socket = await RawSocket.connect(wsUrl(server.url));
  sockets.push(socket);
  return socket;
}

type ErrorList = { message: string; extensions?: { code?: string } }[];

/** The errors a refused operation gets: an `error` message, or a `next` carrying errors. */
async function refusal(socket: RawSocket, id: string): Promise<ErrorList> {
  const message = await socket.next(
    (m: RawMessage) => m.id === id && (m.type === 'error' || m.type === 'next'),
  );
  return message.type === 'error'
    ? (message.payload as ErrorList)
    : ((message.payload as { errors?: ErrorList }).errors ?? []);
}

describe('per-event sharing', () => {
  test('subscriptions differing in operation name, aliases, field order, fragments and variable names cost one subscription’s statements', async () => {
    const variants = [
      `subscription A { teamRunChanged(filter: { teamName: "${TEAM}" }) { state run { execId tasks { taskName state } toolCalls { toolName } } } }`,
      `subscription B { teamRunChanged(filter: { teamName: "${TEAM}" }) { state run { execId tasks { taskName state } toolCalls { toolName } } } }`,
      `subscription { changed: teamRunChanged(filter: { teamName: "${TEAM}" }) { now: state run { id: execId steps: tasks { taskName state } toolCalls { toolName } } } }`,
      `subscription { teamRunChanged(filter: { teamName: "${TEAM}" }) { run { toolCalls { toolName } tasks { state taskName } execId } state } }`,
      `subscription($f: TeamRunChangeFilter) { teamRunChanged(filter: $f) { ...Change } }
       fragment Change on TeamRunChange { state run { execId tasks { taskName state } toolCalls { toolName } } }`,
    ];
    /** Statements other than the poll's while one change reaches every subscription. */
    const nestedStatements = async (socket: RawSocket, ids: string[]) => {
      const execId = randomUUID().replaceAll('-', '').toUpperCase();
      const seen = (state: string) =>
        Promise.all(
          ids.map((id) =>
            socket.next(
              (m) =>
                m.id === id &&
                m.type === 'next' &&
                JSON.stringify(m.payload).includes(execId) &&
                JSON.stringify(m.payload).includes(state),
            ),
          ),
        );
      await startRun(pg, { owner: 'APP_USER', teamName: TEAM, execId });
      await seen('RUNNING');
      const before = await otherStatements(t.server);
      await setRunState(pg, execId, 'WAITING_FOR_HUMAN');
      await seen('WAITING_FOR_HUMAN');
      return (await otherStatements(t.server)) - before;
    };

    const alone = await connect(t);
    alone.subscribe('only', variants[0] as string);
    await settled(t.server, 1);
    const single = await nestedStatements(alone, ['only']);
    alone.terminate();
    await until(async () => (await activeSubscriptions(t.server)) === 0);

    const many = await connect(t);
    variants.forEach((query, i) => {
      many.subscribe(`v${i}`, query, { f: { teamName: TEAM } });
    });
    await settled(t.server, variants.length);
    expect(single).toBeGreaterThan(0);
    // Plans are canonical (src/schema/plan.ts) and the event's runs load through the context
    // every form of the viewer scope shares (Loaders.plannedOfRuns): one statement for all.
    expect(await nestedStatements(many, ['v0', 'v1', 'v2', 'v3', 'v4'])).toBe(single);
    // Each still gets the shape it asked for: its aliases, its field order.
    const last = (id: string) =>
      (many.messages.filter((m) => m.id === id && m.type === 'next').at(-1)?.payload as {
        data: Record<string, Record<string, unknown>>;
      }) ?? { data: {} };
    expect(Object.keys(last('v2').data.changed ?? {})).toEqual(['now', 'run']);
    expect(Object.keys(last('v2').data.changed?.run as object)).toEqual([
      'id',
      'steps',
      'toolCalls',
    ]);
    expect(Object.keys(last('v3').data.teamRunChanged ?? {})).toEqual(['run', 'state']);
    expect(last('v2').data.changed?.now).toBe('WAITING_FOR_HUMAN');
    expect(last('v0')).toEqual(last('v1'));
    expect(last('v4')).toEqual(last('v0'));
    many.terminate();
    await until(async () => (await activeSubscriptions(t.server)) === 0);
  });
});

describe('caps on open subscriptions', () => {
  test('per socket (MAX_SUBSCRIPTIONS_PER_SOCKET), then per viewer (MAX_SUBSCRIPTIONS_PER_VIEWER)', async () => {
    const first = await connect(capped);
    for (const id of ['a', 'b', 'c']) first.subscribe(id, WAITING);
    await until(async () => (await activeSubscriptions(capped.server)) === 3);
    first.subscribe('d', WAITING);
    const overSocket = await refusal(first, 'd');
    expect(overSocket[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(overSocket[0]?.message).toMatch(/at most 3 \(MAX_SUBSCRIPTIONS_PER_SOCKET\)/);
    expect(first.closed).toBeUndefined();

    // Completing one makes room on that socket again.
    first.send({ type: 'complete', id: 'a' });
    await until(async () => (await activeSubscriptions(capped.server)) === 2);
    first.subscribe('e', WAITING);
    await first.next((m) => m.id === 'e' && m.type === 'next');

    const second = await connect(capped);
    second.subscribe('f', WAITING);
    second.subscribe('g', WAITING);
    await until(async () => (await activeSubscriptions(capped.server)) === 5);
    second.subscribe('h', WAITING);
    const overViewer = await refusal(second, 'h');
    expect(overViewer[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(overViewer[0]?.message).toMatch(/at most 5 \(MAX_SUBSCRIPTIONS_PER_VIEWER\)/);

    // SSE counts against the same viewer.
    const sse = await subscribeSse(capped.url, WAITING);
    await sse.until(() => sse.events.length > 0 || sse.completed);
    expect(sse.events[0]?.errors?.[0]?.message).toMatch(/MAX_SUBSCRIPTIONS_PER_VIEWER/);

    // Closing a socket releases its subscriptions.
    first.terminate();
    await until(async () => (await activeSubscriptions(capped.server)) === 2);
    second.subscribe('i', WAITING);
    await second.next((m) => m.id === 'i' && m.type === 'next');
    second.terminate();
  });
});

describe('cost per event', () => {
  test('a subscription whose every event would exceed MAX_QUERY_COST is refused before it starts', async () => {
    const socket = await connect(t);
    let errors: ErrorList = [];
    const statements = await t.countStatements(async () => {
      socket.subscribe(
        'heavy',
        'subscription { teamsWaitingForHuman { run { team { runs(first: 100) { nodes { tasks { toolCalls { toolName } } } } } } } }',
      );
      errors = await refusal(socket, 'heavy');
    });
    expect(errors[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(errors[0]?.message).toMatch(/Query cost \d+ exceeds the limit of 200000/);
    expect(statements).toBe(0);
    expect(socket.closed).toBeUndefined();
    socket.terminate();
  });
});
