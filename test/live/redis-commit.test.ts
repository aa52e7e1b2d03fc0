import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, expect, test } from 'vitest';
import { RedisCoordinator } from '../../src/live/coordinator.js';
import { parseSnapshot, type Snapshot } from '../../src/live/snapshot.js';
import { redisUrl } from '../support/redis.js';

// The coordinator alone against a real Redis: a fresh key prefix keeps it apart from the
// other tests using the same Redis.
const REDIS_URL = redisUrl();
const redis = new Redis(REDIS_URL);
const coordinators: RedisCoordinator[] = [];

afterAll(async () => {
  await Promise.all(coordinators.map((coordinator) => coordinator.close()));
  redis.disconnect();
});

function coordinator(prefix: string): RedisCoordinator {
  const created = new RedisCoordinator({
    url: REDIS_URL,
    prefix,
    intervalMs: 1_000,
    commandTimeoutMs: 1_000,
    logger: pino({ level: 'silent' }),
  });
  coordinators.push(created);
  return created;
}

const snapshot = (epoch: string, seq: number): Snapshot => ({
  epoch,
  seq,
  polledAt: new Date().toISOString(),
  runs: [],
});

test('a cycle that outlived its lock commits if nobody took over since, and only then', async () => {
  const prefix = `agentgraph-test:${randomUUID()}:`;
  const lock = `${prefix}live:lock`;
  const stored = async () => parseSnapshot((await redis.get(`${prefix}live:snapshot`)) as string);
  const mine = coordinator(prefix);
  const token = randomUUID();
  const epoch = randomUUID();
  expect(await mine.claim(token)).toBe('acquired');
  expect(await mine.commit(token, null, snapshot(epoch, 1), null)).toBe(true);

  // The next cycle ran longer than the lock lives (a loaded machine): the lock lapsed.
  await redis.del(lock);
  expect(await mine.commit(token, snapshot(epoch, 1), snapshot(epoch, 2), null)).toBe(true);
  expect(await redis.get(lock)).toBe(token);
  expect((await stored()).seq).toBe(2);

  // Lapsed again, but the cycle started from an older snapshot than the one stored.
  await redis.del(lock);
  expect(await mine.commit(token, snapshot(epoch, 1), snapshot(epoch, 3), null)).toBe(false);

  // Lapsed, and another instance took the lock: refused whatever the cycle started from.
  const theirs = randomUUID();
  expect(await coordinator(prefix).claim(theirs)).toBe('acquired');
  expect(await mine.commit(token, snapshot(epoch, 2), snapshot(epoch, 3), null)).toBe(false);
  expect(await redis.get(lock)).toBe(theirs);
  expect((await stored()).seq).toBe(2);
});
