import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setRunState, startRun } from '../../src/db/embedded/simulator.js';
import { embeddedPg, metric, subscribeSse, wsUrl } from '../live/support.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { hs256Tokens } from '../support/tokens.js';
import { RawSocket } from './raw-ws.js';

const SECRET = 'a-test-secret-that-is-long-enough-for-hs256!';
const REQUESTS = 3;

let t: TestServer;
let off: TestServer;
beforeAll(async () => {
  [t, off] = await Promise.all([
    startTestServer({
      AUTH_JWT_SECRET: SECRET,
      RATE_LIMIT_REQUESTS: String(REQUESTS),
      RATE_LIMIT_SUBSCRIPTIONS: '1',
      RATE_LIMIT_WINDOW_MS: '600000',
      POLL_INTERVAL_MS: '100',
    }),
    startTestServer(),
  ]);
});
afterAll(() => Promise.all([t.stop(), off.stop()]));

const { sign } = hs256Tokens(SECRET);
const token = (subject: string) => sign({ db_user: 'APP_USER' }, { subject });

async function ask(bearer: string) {
  const response = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
    body: JSON.stringify({ query: '{ agents(first: 1) { totalCount } }' }),
  });
  const body = (await response.json()) as {
    data?: unknown;
    errors?: { message: string; extensions?: { code?: string } }[];
  };
  return { response, body };
}

const limited = (kind: string) => metric(t.server, 'agentgraph_rate_limited_total', { kind });

describe('per-identity rate limit', () => {
  test('operations: over the budget is 429 with Retry-After, for that identity only, on every transport', async () => {
    const alice = await token('alice');
    const bob = await token('bob');
    const before = await limited('request');
    for (let i = 0; i < REQUESTS; i++) {
      const { body } = await ask(alice);
      expect(body.errors, `request ${i + 1}`).toBeUndefined();
    }
    const { response, body } = await ask(alice);
    expect(response.status).toBe(429);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(body.errors?.[0]?.message).toMatch(/at most 3 operations .* \(RATE_LIMIT_REQUESTS\)/);
    expect(await limited('request')).toBe(before + 1);

    // Another identity has its own budget.
    expect((await ask(bob)).body.errors).toBeUndefined();

    // The same identity over WebSocket shares the budget.
    const socket = await RawSocket.connect(wsUrl(t.url), { authorization: `Bearer ${alice}` });
    socket.subscribe('q', '{ __typename }');
    const message = await socket.next((m) => m.id === 'q' && m.type === 'next');
    const errors = (message.payload as { errors?: { message: string }[] }).errors;
    expect(errors?.[0]?.message).toMatch(/RATE_LIMIT_REQUESTS/);
    expect(await limited('request')).toBe(before + 2);
    socket.terminate();
    expect(
      t.logs.filter((entry) => entry.msg === 'rate limited').map((entry) => entry.kind),
    ).toContain('request');
  });

  test('subscriptions have their own budget', async () => {
    const carol = await token('carol');
    const headers = { authorization: `Bearer ${carol}` };
    const query = 'subscription { teamsWaitingForHuman { execId } }';
    const first = await subscribeSse(t.url, query, {}, headers);
    await first.take(1);
    expect(first.events[0]?.errors).toBeUndefined();
    const second = await subscribeSse(t.url, query, {}, headers);
    await second.until(() => second.events.length > 0 || second.completed);
    expect(second.events[0]?.errors?.[0]?.message).toMatch(/RATE_LIMIT_SUBSCRIPTIONS/);
    expect(await limited('subscription')).toBeGreaterThanOrEqual(1);
    first.close();
    second.close();
    // Queries are a separate budget.
    expect((await ask(carol)).body.errors).toBeUndefined();
  });

  test('a live query is one operation of the budget, however often it is sent again', async () => {
    const dave = await token('dave');
    const headers = { authorization: `Bearer ${dave}` };
    const pg = embeddedPg(t.server);
    const execId = randomUUID().replaceAll('-', '').toUpperCase();
    await startRun(pg, { owner: 'APP_USER', teamName: 'REPORT_SUMMARY_AGENT_TEAM', execId });
    const query = 'query($id: ID!) @live { teamRun(execId: $id) { state } }';
    const live = await subscribeSse<{ teamRun: { state: string } | null }>(
      t.url,
      query,
      { id: execId },
      headers,
    );
    await live.take(1);
    for (const state of ['WAITING_FOR_HUMAN', 'RESUMING', 'SUCCEEDED'] as const) {
      await setRunState(pg, execId, state);
      await live.until(() => live.events.at(-1)?.data?.teamRun?.state === state);
    }
    // Four answers, one operation: the rest of the budget is left.
    for (let i = 1; i < REQUESTS; i++) {
      expect((await ask(dave)).body.errors, `request ${i + 1}`).toBeUndefined();
    }
    const over = await subscribeSse<unknown>(t.url, query, { id: execId }, headers);
    await over.until(() => over.events.length > 0 || over.completed);
    expect(over.events[0]?.errors?.[0]?.message).toMatch(/RATE_LIMIT_REQUESTS/);
    live.close();
    over.close();
  });

  test('off by default', async () => {
    for (let i = 0; i < 20; i++) {
      expect((await off.gql('{ __typename }')).errors).toBeUndefined();
    }
    expect(await metric(off.server, 'agentgraph_rate_limited_total')).toBe(0);
  });
});
