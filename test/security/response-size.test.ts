import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setRunState, startRun } from '../../src/db/embedded/simulator.js';
import { embeddedPg, settled, subscribeSse, wsUrl } from '../live/support.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { RawSocket } from './raw-ws.js';

/** Small enough that a page of runs with their tasks goes over it. */
const SMALL_RESPONSE = 20_000;

let t: TestServer;
let small: TestServer;
beforeAll(async () => {
  [t, small] = await Promise.all([
    startTestServer(),
    startTestServer({ MAX_RESPONSE_BYTES: String(SMALL_RESPONSE), POLL_INTERVAL_MS: '100' }),
  ]);
});
afterAll(() => Promise.all([t.stop(), small.stop()]));

async function teamIds(server: TestServer, count: number): Promise<string[]> {
  const { data } = await server.gql<{ teams: { nodes: { id: string }[] } }>(
    '{ teams(first: 1) { nodes { id } } }',
  );
  const id = data?.teams.nodes[0]?.id as string;
  return Array.from({ length: count }, () => id);
}

describe('nodes(ids:)', () => {
  test('more than 100 ids is BAD_USER_INPUT naming the limit, before any database work', async () => {
    const ids = await teamIds(t, 15_000);
    let result: Awaited<ReturnType<TestServer['gql']>> | undefined;
    const statements = await t.countStatements(async () => {
      result = await t.gql('query($ids: [ID!]!) { nodes(ids: $ids) { __typename } }', { ids });
    });
    expect(result?.data ?? null).toBeNull();
    expect(result?.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(result?.errors?.[0]?.message).toMatch(/"ids".*at most 100.*15000/);
    expect(statements).toBe(0);
  });

  test('100 ids are answered', async () => {
    const ids = await teamIds(t, 100);
    const { data, errors } = await t.gql<{ nodes: { id: string }[] }>(
      'query($ids: [ID!]!) { nodes(ids: $ids) { id } }',
      { ids },
    );
    expect(errors).toBeUndefined();
    expect(data?.nodes).toHaveLength(100);
  });

  test('the cost limit prices the list by its length', async () => {
    const query = `query($ids: [ID!]!) { nodes(ids: $ids) {
      ... on Team { runs(first: 100) { nodes { tasks { toolCalls { toolName } } } } } } }`;
    // 100 ids × 100 runs × tasks × tool calls: far over MAX_QUERY_COST, whatever the ids.
    const many = await t.gql(query, { ids: await teamIds(t, 100) });
    expect(many.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(many.errors?.[0]?.message).toMatch(/Query cost \d+ exceeds the limit of 200000/);
    const one = await t.gql(query, { ids: await teamIds(t, 1) });
    expect(one.errors).toBeUndefined();
  });
});

describe('response size (MAX_RESPONSE_BYTES)', () => {
  const page =
    '{ teamRuns(first: 100) { nodes { execId teamName owner startDate tasks { taskName agentName input result } } } }';

  test('a response over the limit is replaced by a clear error', async () => {
    const response = await small.post(page);
    expect(response.text.length).toBeLessThan(SMALL_RESPONSE);
    expect(response.data ?? null).toBeNull();
    expect(response.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(response.errors?.[0]?.message).toMatch(/MAX_RESPONSE_BYTES \(20000\)/);
    // The same page is fine on a server with the default limit.
    const full = await t.post(page);
    expect(full.errors).toBeUndefined();
    expect(full.text.length).toBeGreaterThan(SMALL_RESPONSE);
  });

  test('over WebSocket too', async () => {
    const raw = await RawSocket.connect(wsUrl(small.url));
    raw.subscribe('page', page);
    const next = await raw.next((m) => m.type === 'next' && m.id === 'page');
    const payload = next.payload as {
      errors?: { message: string; extensions?: { code?: string } }[];
    };
    expect(payload.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(payload.errors?.[0]?.message).toMatch(/MAX_RESPONSE_BYTES/);
    raw.terminate();
  });

  test('over WebSocket, an event over the limit is the error, between the events around it', async () => {
    const pg = embeddedPg(small.server);
    const team = 'REPORT_SUMMARY_AGENT_TEAM';
    const raw = await RawSocket.connect(wsUrl(small.url));
    raw.subscribe(
      'waits',
      `subscription($team: String) { teamRunChanged(filter: { teamName: $team, states: [WAITING_FOR_HUMAN] }) {
        run { execId tasks { input } } } }`,
      { team },
    );
    const events = () => raw.messages.filter((m) => m.type === 'next' && m.id === 'waits');
    /** A run of `promptChars` characters that then waits for a human, once the last event is in. */
    const waits = async (promptChars: number) => {
      const execId = randomUUID().replaceAll('-', '').toUpperCase();
      const seen = events().length;
      await startRun(pg, {
        owner: 'APP_USER',
        teamName: team,
        execId,
        prompt: 'p'.repeat(promptChars),
      });
      await setRunState(pg, execId, 'WAITING_FOR_HUMAN');
      await raw.next(() => events().length > seen);
      return execId;
    };
    await settled(small.server, 1);
    const first = await waits(10);
    await waits(SMALL_RESPONSE);
    const last = await waits(10);
    const payloads = events().map(
      (m) =>
        m.payload as {
          data?: { teamRunChanged: { run: { execId: string } } } | null;
          errors?: { message: string; extensions?: { code?: string } }[];
        },
    );
    expect(payloads.map((p) => p.data?.teamRunChanged.run.execId ?? null)).toEqual([
      first,
      null,
      last,
    ]);
    expect(payloads[1]?.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(payloads[1]?.errors?.[0]?.message).toMatch(/MAX_RESPONSE_BYTES \(20000\)/);
    raw.terminate();
  });

  test('a live query’s answer over the limit is the error, and the next one comes whole', async () => {
    const pg = embeddedPg(small.server);
    const team = 'REPORT_SUMMARY_AGENT_TEAM';
    interface Running {
      teamRuns: { nodes: { execId: string; tasks: { input: string | null }[] }[] };
    }
    const live = await subscribeSse<Running>(
      small.url,
      `query($team: String) @live {
        teamRuns(first: 5, filter: { teamName: $team, states: [RUNNING] }) { nodes { execId tasks { input } } }
      }`,
      { team },
    );
    await live.take(1);
    expect(live.events[0]?.errors).toBeUndefined();
    // A run starts with a request too long for one answer, then ends.
    const execId = randomUUID().replaceAll('-', '').toUpperCase();
    await startRun(pg, {
      owner: 'APP_USER',
      teamName: team,
      execId,
      prompt: 'p'.repeat(SMALL_RESPONSE),
    });
    await live.until(() => live.events.length >= 2);
    const over = live.events[1];
    expect(over?.data ?? null).toBeNull();
    expect(over?.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(over?.errors?.[0]?.message).toMatch(/MAX_RESPONSE_BYTES \(20000\)/);
    await setRunState(pg, execId, 'SUCCEEDED');
    await live.until(() => live.events.length >= 3);
    expect(live.events[2]?.errors).toBeUndefined();
    expect(live.events[2]?.data).toEqual(live.events[0]?.data);
    live.close();
  });

  test('a small response passes', async () => {
    const { errors, data } = await small.gql('{ agents(first: 1) { totalCount } }');
    expect(errors).toBeUndefined();
    expect(data).toMatchObject({ agents: { totalCount: expect.any(Number) } });
  });
});
