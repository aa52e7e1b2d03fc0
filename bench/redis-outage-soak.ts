/**
 * Redis-outage soak (issue 25, item 4; not part of `npm test`): a server on the embedded
 * database with REDIS_URL pointing at a private redis-server on a free port (never the shared
 * one at 127.0.0.1:6379), 60 s of mixed load — HTTP queries back to back, runs started and
 * ended in the database, graphql-ws subscribers — while that redis-server is killed and
 * started again (at 15 s, back at 25 s) and paused with SIGSTOP (at 35 s, resumed at 45 s).
 * At the end it prints, per subscriber, how many runs' final states were expected and how
 * many arrived.
 *
 *   npx tsx bench/redis-outage-soak.ts            # 60 s
 *   SOAK_SECONDS=20 npx tsx bench/redis-outage-soak.ts
 */
import { randomUUID } from 'node:crypto';
import { createClient } from 'graphql-ws';
import pino from 'pino';
import WebSocket from 'ws';
import { parseCommand } from '../src/command-line.js';
import { loadConfig } from '../src/config.js';
import { setRunState, startRun } from '../src/db/embedded/simulator.js';
import { createServer } from '../src/server.js';
import { redisServer } from './redis-process.js';
import { freePort } from './server-process.js';

parseCommand({
  name: 'npx tsx bench/redis-outage-soak.ts',
  synopsis: '',
  about: `A server on the embedded database with REDIS_URL at a private redis-server on a free
port, under mixed load (queries, runs started and ended, graphql-ws subscribers) while that
redis-server is killed and restarted, then paused and resumed. Prints, per subscriber, how
many runs' final states were expected and how many arrived.`,
  environment: { SOAK_SECONDS: 'how long (default 60)' },
});

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const SUBSCRIBERS = 8;
const at = (fraction: number) => Math.round(SECONDS * 1000 * fraction);

const port = await freePort();
let redis = await redisServer(port);
const config = loadConfig({
  PORT: '0',
  SIMULATE: 'false',
  LOG_LEVEL: 'warn',
  REDIS_URL: `redis://127.0.0.1:${port}`,
  REDIS_PREFIX: `agentgraph-soak:${randomUUID()}:`,
  POLL_INTERVAL_MS: '250',
});
const server = await createServer(config, pino({ level: 'silent' }));
const url = await server.start();
const pg = server.database.embedded?.pg;
if (!pg) throw new Error('not embedded');

// Subscribers: the last state each one saw of each run.
const seen = Array.from({ length: SUBSCRIBERS }, () => new Map<string, string>());
const clients = seen.map((states) => {
  const client = createClient({
    url: `${url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
  });
  client.subscribe<{ teamRunChanged: { state: string; run: { execId: string } } }>(
    { query: 'subscription { teamRunChanged { state run { execId } } }' },
    {
      next: ({ data }) => {
        if (data) states.set(data.teamRunChanged.run.execId, data.teamRunChanged.state);
      },
      error: (error) => console.error('subscriber error', error),
      complete: () => console.error('subscriber completed'),
    },
  );
  return client;
});
await new Promise((resolve) => setTimeout(resolve, 2_000));

const start = Date.now();
const finals = new Map<string, string>();
let queries = 0;
let queryErrors = 0;
const events: string[] = [];
const schedule = (ms: number, what: string, act: () => unknown) =>
  setTimeout(async () => {
    await act();
    events.push(`${((Date.now() - start) / 1000).toFixed(1)} s: ${what}`);
  }, ms);
schedule(at(0.25), 'redis-server killed', () => redis.kill('SIGKILL'));
schedule(at(25 / 60), 'redis-server started again, empty', async () => {
  redis = await redisServer(port);
});
schedule(at(35 / 60), 'redis-server paused (SIGSTOP)', () => redis.kill('SIGSTOP'));
schedule(at(45 / 60), 'redis-server resumed (SIGCONT)', () => redis.kill('SIGCONT'));

const running: string[] = [];
const runs = (async () => {
  while (Date.now() - start < SECONDS * 1000) {
    const execId = randomUUID().replaceAll('-', '').toUpperCase();
    await startRun(pg, { owner: 'APP_USER', teamName: 'ORDER_SUPPORT_TEAM', execId });
    finals.set(execId, 'RUNNING');
    running.push(execId);
    if (running.length > 5) {
      const ended = running.shift() as string;
      const state = Math.random() < 0.5 ? 'SUCCEEDED' : 'FAILED';
      await setRunState(pg, ended, state);
      finals.set(ended, state);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  for (const execId of running) {
    await setRunState(pg, execId, 'SUCCEEDED');
    finals.set(execId, 'SUCCEEDED');
  }
})();
const load = (async () => {
  while (Date.now() - start < SECONDS * 1000) {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query:
          '{ teams(first: 5) { nodes { name runs(first: 3) { nodes { state } } } } teamRuns(first: 10) { totalCount } }',
      }),
    });
    const body = (await response.json()) as { errors?: unknown };
    queries++;
    if (body.errors) queryErrors++;
  }
})();
await Promise.all([runs, load]);
// Delivery after the load: a few poll intervals.
await new Promise((resolve) => setTimeout(resolve, 3_000));

console.log(`redis-outage soak: ${SECONDS} s, ${queries} queries (${queryErrors} with errors)`);
for (const line of events) console.log(`  ${line}`);
const expected = finals.size;
for (const [i, states] of seen.entries()) {
  const received = [...finals].filter(([execId, state]) => states.get(execId) === state).length;
  console.log(`  subscriber ${i + 1}: final states expected ${expected}, received ${received}`);
}
const total = seen.reduce(
  (sum, states) => sum + [...finals].filter(([id, state]) => states.get(id) === state).length,
  0,
);
console.log(`  total: expected ${expected * SUBSCRIBERS}, received ${total}`);
await Promise.all(clients.map((client) => client.dispose()));
await server.stop(1_000);
redis.kill('SIGCONT');
redis.kill('SIGKILL');
process.exit(total === expected * SUBSCRIBERS ? 0 : 1);
