import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setRunState, startRun } from '../../src/db/embedded/simulator.js';
import {
  activeSubscriptions,
  embeddedPg,
  metric,
  settled,
  subscribeSse,
  until,
  wsUrl,
} from '../live/support.js';
import { MovableClock } from '../support/clock.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { hs256Tokens } from '../support/tokens.js';
import { WAIT_MS } from '../support/wait.js';
import { type RawMessage, RawSocket } from './raw-ws.js';

const SECRET = 'a-test-secret-that-is-long-enough-for-hs256!';
const { sign } = hs256Tokens(SECRET);
const WAITING = 'subscription { teamsWaitingForHuman { execId } }';

/** The server's clock for tokens: a test moves it to a token's expiry instead of waiting. */
const clock = new MovableClock();
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ AUTH_JWT_SECRET: SECRET, POLL_INTERVAL_MS: '100' }, { clock });
});
afterAll(() => t.stop());

/**
 * An admin token that expires a minute from the clock's now (JWT `exp` is in whole seconds):
 * it lives until the test moves the clock, however slow the machine.
 */
async function shortLivedToken(): Promise<{ token: string; expiresAt: number }> {
  const exp = Math.floor(clock.now() / 1000) + 60;
  const token = await sign({ roles: ['admin'] }, { expires: exp });
  return { token, expiresAt: exp * 1000 };
}

describe('a token that expires during a session', () => {
  test('WebSocket: the socket is closed with 4401 at exp, with its subscription', async () => {
    const { token, expiresAt } = await shortLivedToken();
    const expiredBefore = await metric(t.server, 'agentgraph_auth_failures_total', {
      transport: 'websocket',
      reason: 'invalid token: expired',
    });
    const raw = await RawSocket.connect(wsUrl(t.url), { authorization: `Bearer ${token}` });
    raw.subscribe('waiting', WAITING);
    await raw.next((m) => m.type === 'next' && m.id === 'waiting');
    expect(raw.closed).toBeUndefined();
    clock.moveTo(expiresAt);
    const closed = await raw.close();
    expect(closed.code).toBe(4401);
    expect(closed.reason).toMatch(/expired/i);
    expect(clock.now()).toBeGreaterThanOrEqual(expiresAt);
    expect(
      await metric(t.server, 'agentgraph_auth_failures_total', {
        transport: 'websocket',
        reason: 'invalid token: expired',
      }),
    ).toBe(expiredBefore + 1);
  });

  test('WebSocket: events reach the subscription until exp, then the socket closes with 4401', async () => {
    const { token, expiresAt } = await shortLivedToken();
    const raw = await RawSocket.connect(wsUrl(t.url), { authorization: `Bearer ${token}` });
    const before = await activeSubscriptions(t.server);
    raw.subscribe('changes', 'subscription { teamRunChanged { state run { execId } } }');
    await settled(t.server, before + 1);
    const pg = embeddedPg(t.server);
    const execId = randomUUID().replaceAll('-', '').toUpperCase();
    const changed = (state: string) => (m: RawMessage) =>
      m.type === 'next' &&
      JSON.stringify(m.payload) ===
        JSON.stringify({ data: { teamRunChanged: { state, run: { execId } } } });
    await startRun(pg, { owner: 'APP_USER', teamName: 'REPORT_SUMMARY_AGENT_TEAM', execId });
    await raw.next(changed('RUNNING'));
    await setRunState(pg, execId, 'WAITING_FOR_HUMAN');
    await raw.next(changed('WAITING_FOR_HUMAN'));
    expect(raw.closed).toBeUndefined();
    clock.moveTo(expiresAt);
    const closed = await raw.close();
    expect(closed.code).toBe(4401);
    expect(clock.now()).toBeGreaterThanOrEqual(expiresAt);
    await until(async () => (await activeSubscriptions(t.server)) === before);
  });

  test('WebSocket: a connection_init with an already expired token is refused', async () => {
    const exp = Math.floor(clock.now() / 1000) - 1;
    const token = await sign({ roles: ['admin'] }, { expires: exp });
    const raw = await RawSocket.open(wsUrl(t.url));
    raw.send({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } });
    expect((await raw.close()).code).toBe(4401);
  });

  test('SSE: the stream sends UNAUTHENTICATED and ends at exp', async () => {
    const { token, expiresAt } = await shortLivedToken();
    const waiting = await subscribeSse<{ teamsWaitingForHuman: unknown[] }>(
      t.url,
      WAITING,
      {},
      { authorization: `Bearer ${token}` },
    );
    await waiting.take(1);
    expect(waiting.completed).toBe(false);
    clock.moveTo(expiresAt);
    await waiting.until(() => waiting.completed, WAIT_MS, 'the stream to end');
    expect(clock.now()).toBeGreaterThanOrEqual(expiresAt);
    const last = waiting.events.at(-1);
    expect(last?.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(last?.errors?.[0]?.message).toMatch(/expired/);
    expect(waiting.errors).toEqual([]);
  });

  test('SSE: a live query sends UNAUTHENTICATED and ends at exp, counted out of the caps', async () => {
    const { token, expiresAt } = await shortLivedToken();
    const live = await subscribeSse<unknown>(
      t.url,
      'query @live { teamRuns(first: 1) { nodes { execId } } }',
      {},
      { authorization: `Bearer ${token}` },
    );
    await live.take(1);
    expect(live.events[0]?.errors).toBeUndefined();
    expect(live.completed).toBe(false);
    clock.moveTo(expiresAt);
    await live.until(() => live.completed, WAIT_MS, 'the stream to end');
    expect(clock.now()).toBeGreaterThanOrEqual(expiresAt);
    const last = live.events.at(-1);
    expect(last?.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(last?.errors?.[0]?.message).toMatch(/expired/);
    await until(async () => (await metric(t.server, 'agentgraph_live_queries')) === 0);
  });
});
