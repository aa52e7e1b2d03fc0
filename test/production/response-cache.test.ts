import { randomUUID } from 'node:crypto';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { CycleMessage } from '../../src/live/hub.js';
import { embeddedPg, goodCycles, metric, pollCycles, until, wsClient } from '../live/support.js';
import { redisUrl } from '../support/redis.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { hs256Tokens } from '../support/tokens.js';
import { WAIT_MS } from '../support/wait.js';

const SECRET = 'a-test-secret-that-is-long-enough-for-hs256!';
const CACHED = { RESPONSE_CACHE_TTL_MS: '60000' };

const { sign } = hs256Tokens(SECRET);
const token = (subject: string, claims: Record<string, unknown>) => sign(claims, { subject });

const cacheResults = async (server: TestServer) => ({
  hit: await metric(server.server, 'agentgraph_response_cache_total', { result: 'hit' }),
  miss: await metric(server.server, 'agentgraph_response_cache_total', { result: 'miss' }),
});

/** The answer and what it cost the database. */
async function ask(
  server: TestServer,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  let result: Awaited<ReturnType<TestServer['post']>> | undefined;
  const statements = await server.countStatements(async () => {
    result = await server.post(query, variables, headers);
  });
  const { data, errors } = result as NonNullable<typeof result>;
  return { data, errors, statements };
}

const DASHBOARD = `{
  teams(first: 50) { totalCount nodes { name owner stats { runCount } runs(first: 3) { nodes { execId state } } } }
  agents(first: 50) { totalCount nodes { name owner } }
  teamRuns(first: 20) { totalCount nodes { execId owner state } }
}`;

describe('owner isolation holds as without the cache', () => {
  let cached: TestServer;
  let plain: TestServer;
  beforeAll(async () => {
    [cached, plain] = await Promise.all([
      // A long poll interval: history answers live one interval, longer than a slow test.
      startTestServer({ AUTH_JWT_SECRET: SECRET, ...CACHED, POLL_INTERVAL_MS: '60000' }),
      startTestServer({ AUTH_JWT_SECRET: SECRET }),
    ]);
    // The first cycle, whether or not it ended before this line runs: waiting for one more
    // would wait out the 60 s interval.
    await until(
      async () => (await goodCycles(cached.server)) >= 1,
      WAIT_MS,
      'the first poll cycle',
    );
  });
  afterAll(() => Promise.all([cached?.stop(), plain?.stop()]));

  // Each scope, and a second identity in it: same owner and role, another token subject.
  const scopes: [string, Record<string, unknown>][] = [
    ['owner APP_USER', { db_user: 'APP_USER' }],
    ['owner ANALYST', { db_user: 'ANALYST' }],
    ['owner OPS', { db_user: 'OPS' }],
    ['an owner with no objects', { db_user: 'NOBODY' }],
    ['admin', { roles: ['admin'] }],
  ];

  test.each(scopes)(
    '%s: the cached answer is the uncached one, shared within the scope',
    async (_, claims) => {
      const first = { authorization: `Bearer ${await token('first', claims)}` };
      const second = { authorization: `Bearer ${await token('second', claims)}` };
      const expected = await ask(plain, DASHBOARD, {}, first);
      expect(expected.errors).toBeUndefined();
      const before = await cacheResults(cached);
      const miss = await ask(cached, DASHBOARD, {}, first);
      const hit = await ask(cached, DASHBOARD, {}, second);
      expect(miss.data).toEqual(expected.data);
      expect(hit.data).toEqual(expected.data);
      expect(miss.statements).toBeGreaterThan(0);
      expect(hit.statements).toBe(0);
      expect(await cacheResults(cached)).toEqual({ hit: before.hit + 1, miss: before.miss + 1 });
    },
  );

  test('each owner sees only its own rows, cached or not', async () => {
    const answers = new Map<string, string[]>();
    for (const owner of ['APP_USER', 'ANALYST', 'OPS']) {
      const headers = { authorization: `Bearer ${await token(owner, { db_user: owner })}` };
      // The second answer comes from the cache (the test above filled it).
      const { data } = await ask(cached, DASHBOARD, {}, headers);
      const owners = JSON.stringify(data).match(/"owner":"[A-Z_]+"/g) ?? [];
      answers.set(owner, [...new Set(owners)]);
    }
    for (const [owner, seen] of answers) expect(seen).toEqual([`"owner":"${owner}"`]);
  });

  test('a result with errors is not cached', async () => {
    const headers = { authorization: `Bearer ${await token('admin', { roles: ['admin'] })}` };
    const query = '{ team(name: "NO_SUCH_TEAM") { name } agents(first: 1) { totalCount } }';
    const first = await ask(cached, query, {}, headers);
    const second = await ask(cached, query, {}, headers);
    expect(first.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(second.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(second.statements).toBeGreaterThan(0);
  });

  test('mutations run every time', async () => {
    const headers = { authorization: `Bearer ${await token('admin', { roles: ['admin'] })}` };
    const mutation = 'mutation { respondToHuman(execId: "0", response: "x") { execId } }';
    const before = await cacheResults(cached);
    await ask(cached, mutation, {}, headers);
    await ask(cached, mutation, {}, headers);
    expect(await cacheResults(cached)).toEqual(before);
  });
});

const RUN = 'query Run($execId: ID!) { teamRun(execId: $execId) { execId state } }';

// One server for both: the transports share a catalog answer, which lives the whole TTL
// whatever the poll interval, and which the poller's cycles (changed runs) never evict.
describe('the poller keeps cached answers true, and every transport reads the same cache', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ ...CACHED, POLL_INTERVAL_MS: '1000' });
    // The cache starts the poller; its first cycle takes the baseline.
    await pollCycles(server.server, 1);
  });
  afterAll(() => server?.stop());

  test('a run that changes state is answered anew within one poll cycle, with no subscriber open', async () => {
    const pg = embeddedPg(server.server);
    const { rows } = await pg.query<{ team_exec_id: string }>(
      `SELECT team_exec_id FROM dba_ai_agent_team_history WHERE state = 'SUCCEEDED' ORDER BY team_exec_id LIMIT 1`,
    );
    const execId = rows[0]?.team_exec_id as string;
    const before = await ask(server, RUN, { execId });
    expect(before.data).toEqual({ teamRun: { execId, state: 'SUCCEEDED' } });
    // Statements are counted server-wide here, and the poller runs meanwhile: the hit shows
    // in the cache's own counter.
    const hits = (await cacheResults(server)).hit;
    expect((await ask(server, RUN, { execId })).data).toEqual(before.data);
    expect((await cacheResults(server)).hit).toBe(hits + 1);
    await pg.query(
      `UPDATE dba_ai_agent_team_history SET state = 'FAILED' WHERE team_exec_id = $1`,
      [execId],
    );
    // The cycle that sees the change evicts the answer; the next one has passed it for sure.
    await pollCycles(server.server, 2);
    const after = await ask(server, RUN, { execId });
    expect(after.data).toEqual({ teamRun: { execId, state: 'FAILED' } });
  });

  test('an answer cached over HTTP POST is a hit over HTTP GET and over graphql-ws', async () => {
    const query = '{ agents(first: 2) { nodes { name owner } } }';
    const posted = await ask(server, query);
    const hits = (await cacheResults(server)).hit;
    const got = await fetch(`${server.url}/graphql?${new URLSearchParams({ query })}`, {
      headers: { accept: 'application/json' },
    });
    expect(((await got.json()) as { data: unknown }).data).toEqual(posted.data);
    const client = wsClient(server.url);
    try {
      const overSocket = await new Promise((resolve, reject) =>
        client.subscribe({ query }, { next: resolve, error: reject, complete: () => {} }),
      );
      expect(overSocket).toEqual({ data: posted.data });
    } finally {
      await client.dispose();
    }
    expect((await cacheResults(server)).hit).toBe(hits + 2);
  });
});

describe('shared through Redis, invalidated through the poller channel', () => {
  const prefix = `agentgraph-test-prod-${randomUUID()}:`;
  let a: TestServer;
  let b: TestServer;
  let redis: Redis;
  beforeAll(async () => {
    const env = {
      ...CACHED,
      REDIS_URL: redisUrl(),
      REDIS_PREFIX: prefix,
      POLL_INTERVAL_MS: '60000',
    };
    [a, b] = await Promise.all([startTestServer(env), startTestServer(env)]);
    redis = new Redis(redisUrl());
  });
  // The answers this run's instances keep in Redis (not the entities' index sets, whose keys
  // name a type).
  const answersStored = async () =>
    (await redis.keys(`${prefix}response-cache:*`)).filter(
      (key) => !key.slice(`${prefix}response-cache:`.length).includes(':'),
    ).length;
  /**
   * Asks `server` an uncached query and waits until its answer is in Redis: the store's write
   * is sent as the answer leaves, on a connection of its own, so the other instance's read may
   * reach Redis first.
   */
  async function askAndStore(server: TestServer, query: string, variables = {}) {
    const before = await answersStored();
    const answer = await ask(server, query, variables);
    await until(async () => (await answersStored()) > before, WAIT_MS, 'the answer stored');
    return answer;
  }
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    // Only this run's keys: the Redis is shared.
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(keys);
    redis.disconnect();
  });

  test('an answer cached by one instance is served by the other, and a cycle message evicts it on both', async () => {
    const { data } = await ask(a, '{ teamRuns(first: 1) { nodes { execId teamName owner } } }');
    const run = (
      data as { teamRuns: { nodes: { execId: string; teamName: string; owner: string }[] } }
    ).teamRuns.nodes[0] as { execId: string; teamName: string; owner: string };
    const OTHER = '{ agents(first: 3) { nodes { name } } }';

    expect((await askAndStore(a, RUN, { execId: run.execId })).statements).toBeGreaterThan(0);
    expect((await ask(b, RUN, { execId: run.execId })).statements).toBe(0);
    await askAndStore(a, OTHER);
    expect((await ask(b, OTHER)).statements).toBe(0);

    // What a poller of any instance publishes when it sees the run change.
    const message: CycleMessage = {
      epoch: randomUUID(),
      seq: 1,
      polledAt: new Date().toISOString(),
      transitions: [
        {
          previousState: 'RUNNING',
          run: {
            ...run,
            state: 'SUCCEEDED',
            startDate: null,
            endDate: null,
            instanceId: null,
            waitingSince: null,
          },
        },
      ],
      waiting: [],
    };
    const entity = `${prefix}response-cache:TeamRun:${encodeGlobalID('TeamRun', run.execId)}`;
    expect(await redis.exists(entity)).toBe(1);
    await redis.publish(`${prefix}live:cycles`, JSON.stringify(message));
    await until(async () => (await redis.exists(entity)) === 0, WAIT_MS, 'the run evicted');

    expect((await askAndStore(b, RUN, { execId: run.execId })).statements).toBeGreaterThan(0);
    expect((await ask(a, RUN, { execId: run.execId })).statements).toBe(0);
    // Answers without the run stay.
    expect((await ask(a, OTHER)).statements).toBe(0);
  });
});
