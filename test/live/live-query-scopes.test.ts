import type { Client } from 'graphql-ws';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import { setRunState } from '../../src/db/embedded/simulator.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { hs256Tokens } from '../support/tokens.js';
import {
  embeddedPg,
  metric,
  pollCycles,
  type Recorder,
  runningRunOf,
  subscribeSse,
  subscribeWs,
  until,
  wsUrl,
} from './support.js';

const SECRET = 'a-live-query-test-secret-long-enough!!';
let t: TestServer;
let capped: TestServer;
const tokens = { appUser: '', otherAppUser: '', analyst: '', admin: '' };
const clients: Client[] = [];

beforeAll(async () => {
  const env = { AUTH_JWT_SECRET: SECRET, POLL_INTERVAL_MS: '150' };
  [t, capped] = await Promise.all([
    startTestServer(env),
    startTestServer({ ...env, MAX_LIVE_QUERIES_PER_VIEWER: '2', MAX_LIVE_QUERIES: '3' }),
  ]);
  const { sign } = hs256Tokens(SECRET);
  tokens.appUser = await sign({ db_user: 'APP_USER' });
  tokens.otherAppUser = await sign({ db_user: 'APP_USER' }, { subject: 'another-person' });
  tokens.analyst = await sign({ db_user: 'ANALYST' });
  tokens.admin = await sign({ roles: ['admin'] });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
  await Promise.all([t.stop(), capped.stop()]);
});

const client = (server: TestServer, token: string) => {
  const c = createClient({
    url: wsUrl(server.url),
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${token}` },
  });
  clients.push(c);
  return c;
};

const runningRun = (owner: string) => runningRunOf(t.url, tokens.admin, owner);

interface Waiting {
  teamRuns: { nodes: { execId: string; owner: string }[] };
}
// The same document in every scope: identical live queries are shared within a scope only.
const WAITING = `query Waiting @live {
  teamRuns(first: 100, filter: { states: [WAITING_FOR_HUMAN] }) { nodes { execId owner } }
}`;
const ids = (recorder: Recorder<Waiting>) =>
  recorder.data.at(-1)?.teamRuns.nodes.map((run) => run.execId) ?? [];
const owners = (recorder: Recorder<Waiting>) =>
  new Set(recorder.data.flatMap((answer) => answer.teamRuns.nodes.map((run) => run.owner)));

describe('owner isolation, as for the query', () => {
  test('each viewer scope sees its own runs, and a change only where the query would show it', async () => {
    const mine = await runningRun('APP_USER');
    const theirs = await runningRun('ANALYST');
    const appUser = subscribeWs<Waiting>(client(t, tokens.appUser), WAITING);
    const appUserSse = await subscribeSse<Waiting>(
      t.url,
      WAITING,
      {},
      {
        authorization: `Bearer ${tokens.appUser}`,
      },
    );
    const analyst = subscribeWs<Waiting>(client(t, tokens.analyst), WAITING);
    const admin = subscribeWs<Waiting>(client(t, tokens.admin), WAITING);
    const all = [appUser, appUserSse, analyst, admin];
    for (const recorder of all) await recorder.take(1);

    const pg = embeddedPg(t.server);
    await setRunState(pg, mine, 'WAITING_FOR_HUMAN');
    await setRunState(pg, theirs, 'WAITING_FOR_HUMAN');
    await admin.until(() => ids(admin).includes(mine) && ids(admin).includes(theirs));
    await appUser.until(() => ids(appUser).includes(mine));
    await appUserSse.until(() => ids(appUserSse).includes(mine));
    await analyst.until(() => ids(analyst).includes(theirs));

    expect(owners(appUser)).toEqual(new Set(['APP_USER']));
    expect(owners(appUserSse)).toEqual(new Set(['APP_USER']));
    expect(owners(analyst)).toEqual(new Set(['ANALYST']));
    expect(owners(admin).size).toBeGreaterThan(1);
    expect(ids(appUser)).not.toContain(theirs);
    expect(ids(analyst)).not.toContain(mine);
    // Each scope's answer is what its query answers.
    for (const [recorder, token] of [
      [appUser, tokens.appUser],
      [analyst, tokens.analyst],
      [admin, tokens.admin],
    ] as const) {
      const response = await fetch(`${t.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: WAITING.replace('@live', '') }),
      });
      expect(((await response.json()) as { data: Waiting }).data).toEqual(recorder.data.at(-1));
    }
    for (const recorder of all) recorder.close();
  });

  test('two identities of one scope share one execution per change; another scope runs its own', async () => {
    const mine = await runningRun('APP_USER');
    const query = WAITING.replace('query Waiting', 'query ScopeShared');
    const executions = () =>
      metric(t.server, 'agentgraph_subscription_events_total', { operation: 'ScopeShared' });
    const appUser = subscribeWs<Waiting>(client(t, tokens.appUser), query);
    await appUser.take(1);
    // Once the poller has seen the new run, nothing else invalidates this list.
    await pollCycles(t.server, 2);
    const alone = await executions();
    const otherAppUser = subscribeWs<Waiting>(client(t, tokens.otherAppUser), query);
    await otherAppUser.take(1);
    // The other person of the scope joined on the answer there is.
    expect(await executions()).toBe(alone);
    const analyst = subscribeWs<Waiting>(client(t, tokens.analyst), query);
    await analyst.take(1);
    expect(await executions()).toBe(alone + 1);

    await setRunState(embeddedPg(t.server), mine, 'WAITING_FOR_HUMAN');
    await appUser.until(() => ids(appUser).includes(mine));
    await otherAppUser.until(() => ids(otherAppUser).includes(mine));
    // One run per scope, and no more once later cycles are behind us.
    await until(async () => (await executions()) >= alone + 3);
    await pollCycles(t.server, 2);
    expect(await executions()).toBe(alone + 3);
    expect(ids(analyst)).not.toContain(mine);
    for (const recorder of [appUser, otherAppUser, analyst]) recorder.close();
  });

  test('without a token, a live query is refused as the query is', async () => {
    const response = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: WAITING }),
    });
    expect(response.status).toBe(401);
    await response.body?.cancel();
  });
});

describe('caps', () => {
  const QUERY = 'query @live { teams(first: 1) { nodes { name } } }';
  const refusal = async (recorder: Recorder<unknown>) => {
    await recorder.until(() => recorder.events.length > 0 || recorder.errors.length > 0);
    const error = (recorder.events[0]?.errors ?? (recorder.errors[0] as never))?.[0] as {
      message: string;
      extensions: { code: string; limit: string };
    };
    return error;
  };

  test('per identity and per process, with LIVE_QUERY_LIMIT naming the limit', async () => {
    const appUser = client(capped, tokens.appUser);
    const first = subscribeWs<unknown>(appUser, QUERY);
    const second = subscribeWs<unknown>(appUser, QUERY);
    await first.take(1);
    await second.take(1);
    const third = subscribeWs<unknown>(appUser, QUERY);
    const perViewer = await refusal(third);
    expect(perViewer.extensions).toMatchObject({
      code: 'LIVE_QUERY_LIMIT',
      limit: 'MAX_LIVE_QUERIES_PER_VIEWER',
    });
    expect(perViewer.message).toContain('at most 2');

    const analyst = await subscribeSse<unknown>(
      capped.url,
      QUERY,
      {},
      {
        authorization: `Bearer ${tokens.analyst}`,
      },
    );
    await analyst.take(1);
    expect(await metric(capped.server, 'agentgraph_live_queries')).toBe(3);
    const over = await subscribeSse<unknown>(
      capped.url,
      QUERY,
      {},
      {
        authorization: `Bearer ${tokens.analyst}`,
      },
    );
    const perProcess = await refusal(over);
    expect(perProcess.extensions).toMatchObject({
      code: 'LIVE_QUERY_LIMIT',
      limit: 'MAX_LIVE_QUERIES',
    });

    // Ending one makes room again.
    first.close();
    await until(async () => (await metric(capped.server, 'agentgraph_live_queries')) === 2);
    const again = await subscribeSse<unknown>(
      capped.url,
      QUERY,
      {},
      {
        authorization: `Bearer ${tokens.analyst}`,
      },
    );
    await again.take(1);
    expect(again.events[0]?.errors).toBeUndefined();
    for (const recorder of [second, analyst, again]) recorder.close();
    await until(async () => (await metric(capped.server, 'agentgraph_live_queries')) === 0);
  });
});
