import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, expect, test } from 'vitest';
import WebSocket from 'ws';
import { setRunState } from '../../src/db/embedded/simulator.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { hs256Tokens } from '../support/tokens.js';
import { embeddedPg, pollCycles, runningRunOf, settled, subscribeWs, wsUrl } from './support.js';

const SECRET = 'a-live-test-secret-that-is-long-enough!!';
let t: TestServer;
const tokens = { appUser: '', admin: '' };

beforeAll(async () => {
  t = await startTestServer({ AUTH_JWT_SECRET: SECRET, POLL_INTERVAL_MS: '150' });
  const { sign } = hs256Tokens(SECRET);
  tokens.appUser = await sign({ db_user: 'APP_USER' });
  tokens.admin = await sign({ roles: ['admin'] });
});
afterAll(() => t.stop());

const client = (authorization?: string) =>
  createClient({
    url: wsUrl(t.url),
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: authorization ? { authorization } : undefined,
  });

const runningRun = (owner: string) => runningRunOf(t.url, tokens.admin, owner);

test('a WebSocket without a valid token is closed with 4401', async () => {
  for (const authorization of [undefined, 'Bearer garbage']) {
    const closed = new Promise<number>((resolve) => {
      const c = createClient({
        url: wsUrl(t.url),
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        lazy: false,
        onNonLazyError: () => {},
        connectionParams: authorization ? { authorization } : undefined,
        on: { closed: (event) => resolve((event as { code: number }).code) },
      });
      c.subscribe(
        { query: 'subscription { teamsWaitingForHuman { execId } }' },
        { next() {}, error() {}, complete() {} },
      );
    });
    expect(await closed).toBe(4401);
  }
});

test('subscribers see only their owner’s runs, over WebSocket and SSE', async () => {
  const mine = await runningRun('APP_USER');
  const theirs = await runningRun('ANALYST');
  const appUser = client(`Bearer ${tokens.appUser}`);
  const admin = client(`Bearer ${tokens.admin}`);
  const QUERY =
    'subscription { teamRunChanged(filter: { states: [WAITING_FOR_HUMAN] }) { run { execId owner } } }';
  const forAppUser = subscribeWs<{ teamRunChanged: { run: { execId: string; owner: string } } }>(
    appUser,
    QUERY,
  );
  const forAdmin = subscribeWs<{ teamRunChanged: { run: { execId: string; owner: string } } }>(
    admin,
    QUERY,
  );
  const waiting = subscribeWs<{ teamsWaitingForHuman: { run: { owner: string } }[] }>(
    appUser,
    'subscription { teamsWaitingForHuman { run { owner } } }',
  );
  try {
    const [initial] = await waiting.take(1);
    expect(initial?.teamsWaitingForHuman.length).toBeGreaterThan(0);
    expect(initial?.teamsWaitingForHuman.every((w) => w.run.owner === 'APP_USER')).toBe(true);

    // Every subscription in place, and a poll cycle since, before anything moves.
    await settled(t.server, 3);
    const pg = embeddedPg(t.server);
    await setRunState(pg, theirs, 'WAITING_FOR_HUMAN');
    await setRunState(pg, mine, 'WAITING_FOR_HUMAN');
    const adminEvents = await forAdmin.take(2);
    expect(adminEvents.map((e) => e.teamRunChanged.run.execId).sort()).toEqual(
      [mine, theirs].sort(),
    );
    const appUserEvents = await forAppUser.take(1);
    await pollCycles(t.server, 2);
    expect(forAppUser.data.map((e) => e.teamRunChanged.run.execId)).toEqual([mine]);
    expect(appUserEvents[0]?.teamRunChanged.run.owner).toBe('APP_USER');
  } finally {
    forAppUser.close();
    forAdmin.close();
    waiting.close();
    await appUser.dispose();
    await admin.dispose();
  }

  const sse = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query: 'subscription { teamsWaitingForHuman { execId } }' }),
  });
  expect(sse.status).toBe(401);
  await sse.body?.cancel();
});
