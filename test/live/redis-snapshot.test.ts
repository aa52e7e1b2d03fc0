import { randomUUID } from 'node:crypto';
import type { Client } from 'graphql-ws';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, test } from 'vitest';
import { startRun } from '../../src/db/embedded/simulator.js';
import { parseSnapshot } from '../../src/live/snapshot.js';
import { redisUrl } from '../support/redis.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { embeddedPg, settled, subscribeWs, wsClient } from './support.js';

// The Redis the tests share (test/support/redis.ts), with a fresh key prefix per case.
const REDIS_URL = redisUrl();
const redis = new Redis(REDIS_URL);
const servers: TestServer[] = [];
const clients: Client[] = [];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.dispose()));
  await Promise.all(servers.map((server) => server.stop()));
  redis.disconnect();
});

interface Change {
  teamRunChanged: { previousState: string | null; state: string; run: { execId: string } };
}

describe('a corrupt live snapshot in Redis', () => {
  test.each([
    ['cut short', '{"epoch":"e1","seq":4,"polledAt":"2026-'],
    ['with a polledAt that is no date', '{"epoch":"e1","seq":4,"polledAt":"yesterday","runs":[]}'],
    [
      'with a run in an unknown state',
      '{"epoch":"e1","seq":4,"polledAt":"2026-01-01T00:00:00.000Z","runs":[{"execId":"X","teamName":"T","owner":"O","state":"DANCING","startDate":null,"endDate":null,"instanceId":null,"waitingSince":null}]}',
    ],
  ])('%s: dropped with one log line, and live updates carry on', async (_case, stored) => {
    const prefix = `agentgraph-test:${randomUUID()}:`;
    const key = `${prefix}live:snapshot`;
    await redis.set(key, stored, 'PX', 60_000);
    const t = await startTestServer({
      REDIS_URL,
      REDIS_PREFIX: prefix,
      POLL_INTERVAL_MS: '300',
    });
    servers.push(t);
    const client = wsClient(t.url);
    clients.push(client);
    const changes = subscribeWs<Change>(
      client,
      'subscription { teamRunChanged { previousState state run { execId } } }',
    );
    await settled(t.server, 1);

    const execId = randomUUID().replaceAll('-', '').toUpperCase();
    await startRun(embeddedPg(t.server), {
      owner: 'APP_USER',
      teamName: 'ORDER_SUPPORT_TEAM',
      execId,
    });
    const [created] = await changes.take(1);
    expect(created?.teamRunChanged).toEqual({
      previousState: null,
      state: 'RUNNING',
      run: { execId },
    });
    const warnings = t.logs.filter((line) =>
      line.msg.startsWith('live snapshot in Redis is unusable'),
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, key });
    // What the poller stores now is a snapshot again.
    const now = await redis.get(key);
    expect(now).not.toBe(stored);
    expect(parseSnapshot(now ?? '').runs.some((run) => run.execId === execId)).toBe(true);
    changes.close();
  });
});
