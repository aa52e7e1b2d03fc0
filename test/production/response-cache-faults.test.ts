import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { waitingRun } from '../hitl/support.js';
import { embeddedPg, metric, until } from '../live/support.js';
import { PrivateRedis } from '../support/redis.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { hs256Tokens } from '../support/tokens.js';
import { WAIT_MS } from '../support/wait.js';

const SECRET = 'a-test-secret-that-is-long-enough-for-hs256!';
const { sign } = hs256Tokens(SECRET);
const bearer = async (claims: Record<string, unknown>) => ({
  authorization: `Bearer ${await sign(claims, { subject: 'cache-faults' })}`,
});

const ask = (
  server: TestServer,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) => server.post(query, variables, headers);

const cached = (server: TestServer, result: string) =>
  metric(server.server, 'agentgraph_response_cache_total', { result });
const cacheErrors = (server: TestServer, operation: string) =>
  metric(server.server, 'agentgraph_response_cache_errors_total', { operation });
const cacheBytes = (server: TestServer) => metric(server.server, 'agentgraph_response_cache_bytes');

/**
 * The answer, and whether the cache served it. The poller runs meanwhile (the cache keeps it
 * running): a hit shows in the cache's counter, not in a statement count.
 */
async function hitOrNot(
  server: TestServer,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const hits = await cached(server, 'hit');
  const { data, errors } = await ask(server, query, variables, headers);
  expect(errors).toBeUndefined();
  return { data, hit: (await cached(server, 'hit')) === hits + 1 };
}

const MAX_BYTES = 65_536;

describe('in memory: bounded by bytes, expired answers purged, keyed on what the operation uses', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      RESPONSE_CACHE_TTL_MS: '60000',
      RESPONSE_CACHE_MAX_BYTES: String(MAX_BYTES),
      // History answers live one interval: long enough to see them cached, short to see them go.
      POLL_INTERVAL_MS: '1000',
    });
  });
  afterAll(() => server?.stop());

  const hit = (query: string, variables: Record<string, unknown> = {}) =>
    hitOrNot(server, query, variables);

  test('an answer whose TTL has ended leaves the cache without being asked for again', async () => {
    const before = await cacheBytes(server);
    expect(before).toBe(0);
    const history = await ask(server, '{ teamRuns(first: 20) { nodes { execId state } } }');
    expect(history.errors).toBeUndefined();
    expect(await cacheBytes(server)).toBeGreaterThan(before);
    await until(
      async () => (await cacheBytes(server)) <= before,
      WAIT_MS,
      'the expired answer purged',
    );
  });

  const catalog = (i: number) =>
    `{ a${i}: agents(first: 50) { nodes { name owner description } } t${i}: teams(first: 50) { nodes { name owner description } } }`;

  test('distinct answers past the bound evict the oldest, and the cache never holds more than its bytes', async () => {
    const first = await ask(server, catalog(0));
    expect(first.errors).toBeUndefined();
    const size = Buffer.byteLength(first.text);
    expect(size).toBeGreaterThan(1_000);
    const distinct = Math.ceil((3 * MAX_BYTES) / size);
    for (let i = 1; i <= distinct; i++) {
      expect((await ask(server, catalog(i))).errors).toBeUndefined();
      const bytes = await cacheBytes(server);
      expect(bytes).toBeGreaterThan(0);
      expect(bytes).toBeLessThanOrEqual(MAX_BYTES);
    }
    // The newest is still there, the first was evicted to make room.
    expect((await hit(catalog(distinct))).hit).toBe(true);
    expect((await hit(catalog(0))).hit).toBe(false);
  });

  test('a variable the operation does not declare, or other spacing, is the same entry', async () => {
    const query = 'query Agents($n: Int!) { agents(first: $n) { nodes { name } } }';
    const miss = await hit(query, { n: 3, unused: randomUUID() });
    expect(miss.hit).toBe(false);
    for (let i = 0; i < 5; i++) {
      const again = await hit(query.replaceAll(' ', '  '), { n: 3, unused: i });
      expect(again).toEqual({ data: miss.data, hit: true });
    }
    // A declared variable that changes is another answer.
    expect((await hit(query, { n: 4 })).hit).toBe(false);
  });
});

describe('in Redis, shared by instances with different settings, through outages', () => {
  const prefix = `agentgraph-test-cache-faults-${randomUUID()}:`;
  let redis: PrivateRedis;
  let client: Redis;
  let statsPublic: TestServer;
  let statsPrivate: TestServer;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
    client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    client.on('error', () => {}); // while this test's Redis is down
    const env = {
      AUTH_JWT_SECRET: SECRET,
      RESPONSE_CACHE_TTL_MS: '60000',
      REDIS_URL: redis.url,
      REDIS_PREFIX: prefix,
      // History answers live one interval: longer than a slow test's steps.
      POLL_INTERVAL_MS: '20000',
      // What a stalled Redis costs a query: a quarter of the default second.
      REDIS_COMMAND_TIMEOUT_MS: '250',
    };
    [statsPublic, statsPrivate] = await Promise.all([
      startTestServer({ ...env, STATS_PUBLIC: 'true' }),
      startTestServer({ ...env, STATS_PUBLIC: 'false' }),
    ]);
  });
  afterAll(async () => {
    client?.disconnect();
    await Promise.all([statsPublic?.stop(), statsPrivate?.stop()]);
    await redis?.stop();
  });

  test('an answer one instance’s settings allow is not served by an instance whose settings refuse it', async () => {
    const owner = await bearer({ db_user: 'APP_USER' });
    const query = '{ execStatSummary { executionCount } }';
    expect((await hitOrNot(statsPublic, query, {}, owner)).hit).toBe(false);
    expect((await hitOrNot(statsPublic, query, {}, owner)).hit).toBe(true);
    const refused = await ask(statsPrivate, query, {}, owner);
    expect(refused.data?.execStatSummary ?? null).toBeNull();
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  test('every key the cache writes expires: answers and the entity index alike', async () => {
    const admin = await bearer({ roles: ['admin'] });
    for (let i = 1; i <= 5; i++) {
      const { errors } = await ask(
        statsPublic,
        `{ teamRuns(first: ${i}) { nodes { execId team { name } } } agents(first: ${i}) { nodes { name } } }`,
        {},
        admin,
      );
      expect(errors).toBeUndefined();
    }
    const keys = await client.keys(`${prefix}response-cache:*`);
    expect(keys.some((key) => key.includes(':TeamRun:'))).toBe(true);
    // PTTL is -1 for a key without expiry (-2 for one gone since KEYS).
    const ttls = await Promise.all(keys.map((key) => client.pttl(key)));
    expect(ttls.filter((ttl) => ttl === -1)).toEqual([]);
    for (const ttl of ttls) expect(ttl).toBeLessThanOrEqual(60_000);
  });

  const QUERY = '{ teams(first: 3) { nodes { name owner } } }';

  test('Redis down: queries run uncached, counted; a mutation’s failed eviction ends nothing', async () => {
    const admin = await bearer({ roles: ['admin'] });
    const expected = await ask(statsPublic, QUERY, {}, admin);
    expect((await hitOrNot(statsPublic, QUERY, {}, admin)).hit).toBe(true);
    await redis.kill();
    const unavailable = await cached(statsPublic, 'unavailable');
    const down = await ask(statsPublic, QUERY, {}, admin);
    expect(down.errors).toBeUndefined();
    expect(down.data).toEqual(expected.data);
    expect(await cached(statsPublic, 'unavailable')).toBe(unavailable + 1);
    expect(await cacheErrors(statsPublic, 'get')).toBeGreaterThan(0);

    const execId = await waitingRun(embeddedPg(statsPublic.server));
    const respond = await ask(
      statsPublic,
      'mutation ($execId: ID!) { respondToHuman(execId: $execId, response: "ok") { execId run { execId state } } }',
      { execId },
      admin,
    );
    expect(respond.errors).toBeUndefined();
    expect(await cacheErrors(statsPublic, 'invalidate')).toBeGreaterThan(0);
    // Still serving.
    expect((await ask(statsPublic, QUERY, {}, admin)).errors).toBeUndefined();
  });

  test('Redis back, empty: answers are cached again', async () => {
    const admin = await bearer({ roles: ['admin'] });
    await redis.restart();
    await until(
      async () => (await hitOrNot(statsPublic, QUERY, {}, admin)).hit,
      10_000,
      'an answer served from the restarted Redis',
    );
  });

  test('Redis stalled (SIGSTOP): a mutation is answered and its eviction fails without ending the process; queries run uncached', async () => {
    const admin = await bearer({ roles: ['admin'] });
    const execId = await waitingRun(embeddedPg(statsPublic.server));
    // The run, cached: the mutation's answer names it, so the mutation evicts it.
    const RUN = 'query ($execId: ID!) { teamRun(execId: $execId) { execId state } }';
    await ask(statsPublic, RUN, { execId }, admin);
    const failedEvictions = await cacheErrors(statsPublic, 'invalidate');
    redis.pause();
    try {
      const respond = await ask(
        statsPublic,
        'mutation ($execId: ID!) { respondToHuman(execId: $execId, response: "ok") { execId run { execId state } } }',
        { execId },
        admin,
      );
      expect(respond.errors).toBeUndefined();
      // The answer waited for the eviction, which failed on the command timeout.
      expect(await cacheErrors(statsPublic, 'invalidate')).toBeGreaterThan(failedEvictions);
      const stalled = await ask(statsPublic, RUN, { execId }, admin);
      expect(stalled.errors).toBeUndefined();
      expect(stalled.data).toEqual({ teamRun: { execId, state: 'RESUMING' } });
    } finally {
      redis.resume();
    }
    expect((await ask(statsPublic, QUERY, {}, admin)).errors).toBeUndefined();
  });
});
