/**
 * Response cache soak under faults (issue 38; not part of `npm test`), modelled on
 * bench/redis-outage-soak.ts: two servers on their embedded databases with the response cache
 * on, one in memory (bounded at RESPONSE_CACHE_MAX_BYTES) and one in a private redis-server
 * on a free port (never the shared one at 127.0.0.1:6379). For SOAK_SECONDS, clients query
 * runs whose state the soak changes in the database, query catalog pages under ever-new
 * aliases (to push the memory bound), and answer waiting runs with respondToHuman, while the
 * redis-server is killed (at 25 %), started again empty (42 %), paused with SIGSTOP (58 %) and
 * resumed (75 %). It then prints, per server: requests and errors, cache hits, misses and
 * failed operations, answers older than their TTL allows (a run's state it had left more
 * than a TTL before the request), the largest in-memory cache size seen against its bound,
 * the process's largest heap, and any unhandled rejection. Exit code 1 when an answer was
 * stale, a request failed, the bound was passed or a rejection went unhandled.
 *
 *   npx tsx bench/cache-fault-soak.ts             # 60 s
 *   SOAK_SECONDS=20 npx tsx bench/cache-fault-soak.ts
 */
import { randomUUID } from 'node:crypto';
import { parseCommand } from '../src/command-line.js';
import type { AgentGraphServer } from '../src/server.js';
import { redisServer } from './redis-process.js';
import { freePort } from './server-process.js';

parseCommand({
  name: 'npx tsx bench/cache-fault-soak.ts',
  synopsis: '',
  about: `Two servers with the response cache on, one in memory and one in a private
redis-server, queried while the soak changes runs, pushes the memory bound and answers waits,
as that redis-server is killed, restarted empty, paused and resumed. Prints per server the
requests, errors, cache hits, misses and failures, stale answers, the largest cache size
against its bound and the largest heap; exit code 1 on a stale answer, a failed request, a
passed bound or an unhandled rejection.`,
  environment: {
    SOAK_SECONDS: 'how long (default 60)',
    RESPONSE_CACHE_MAX_BYTES: "the in-memory cache's bound",
  },
});
// After the command line (src/command-line.ts says why).
const [{ default: pino }, { loadConfig }, { setRunState, startRun }, { createServer }] =
  await Promise.all([
    import('pino'),
    import('../src/config.js'),
    import('../src/db/embedded/simulator.js'),
    import('../src/server.js'),
  ]);

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const TTL_MS = 5_000;
const POLL_MS = 250;
const MAX_BYTES = 65_536;
/** A request's own time, beyond the TTL, that an answer may lag by (a stalled look-up waits 1 s). */
const SLACK_MS = 1_500;
const at = (fraction: number) => Math.round(SECONDS * 1000 * fraction);

const rejections: unknown[] = [];
process.on('unhandledRejection', (reason) => rejections.push(reason));

async function metric(server: AgentGraphServer, name: string, labels: Record<string, string> = {}) {
  const found = await server.metrics.registry.getSingleMetric(name)?.get();
  return (found?.values ?? [])
    .filter((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value))
    .reduce((sum, v) => sum + v.value, 0);
}

const port = await freePort();
let redis = await redisServer(port);
const common = {
  PORT: '0',
  SIMULATE: 'false',
  LOG_LEVEL: 'silent',
  POLL_INTERVAL_MS: String(POLL_MS),
  RESPONSE_CACHE_TTL_MS: String(TTL_MS),
  RESPONSE_CACHE_MAX_BYTES: String(MAX_BYTES),
};
const targets = [
  { label: 'memory', env: common },
  {
    label: 'redis',
    env: {
      ...common,
      REDIS_URL: `redis://127.0.0.1:${port}`,
      REDIS_PREFIX: `agentgraph-cache-soak:${randomUUID()}:`,
    },
  },
];

interface Figures {
  requests: number;
  errors: number;
  stale: number;
  examples: string[];
  maxCacheBytes: number;
}

const start = Date.now();
const running = () => Date.now() - start < SECONDS * 1000;
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

let maxHeap = 0;
const heapSampler = setInterval(() => {
  maxHeap = Math.max(maxHeap, process.memoryUsage().heapUsed);
}, 200);

async function soak(label: string, env: Record<string, string>) {
  const server = await createServer(loadConfig(env), pino({ level: 'silent' }));
  const url = await server.start();
  const pg = server.database.embedded?.pg;
  if (!pg) throw new Error('not embedded');
  const figures: Figures = { requests: 0, errors: 0, stale: 0, examples: [], maxCacheBytes: 0 };
  const post = async (query: string, variables: Record<string, unknown> = {}) => {
    figures.requests++;
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
    if (body.errors) {
      figures.errors++;
      if (figures.examples.length < 5) figures.examples.push(JSON.stringify(body.errors));
    }
    return body.data;
  };

  // Each run's states with the instant the soak wrote each one.
  const history = new Map<string, { state: string; since: number }[]>();
  const record = (execId: string, state: string, since = Date.now()) => {
    const states = history.get(execId) ?? [];
    states.push({ state, since });
    history.set(execId, states);
  };
  /** Whether `state` was the run's state at some instant of [from, to]. */
  const heldWithin = (execId: string, state: string, from: number, to: number) => {
    const states = history.get(execId) ?? [];
    return states.some(
      (entry, i) =>
        entry.state === state &&
        // A state is written just after the soak records it, or (an answer) just before.
        entry.since <= to + SLACK_MS &&
        (states[i + 1]?.since ?? Number.POSITIVE_INFINITY) >= from,
    );
  };

  const runs: string[] = [];
  const writer = (async () => {
    while (running()) {
      const execId = randomUUID().replaceAll('-', '').toUpperCase();
      record(execId, 'RUNNING');
      await startRun(pg, { owner: 'APP_USER', teamName: 'REPORT_SUMMARY_AGENT_TEAM', execId });
      await setRunState(pg, execId, 'RUNNING');
      runs.push(execId);
      // Each run changes once more, and then only the responder touches it: a run waiting for
      // a person is answered (RESUMING), one that ran on succeeds.
      const older = runs.at(-3);
      if (older) {
        const state = Math.random() < 0.5 ? 'WAITING_FOR_HUMAN' : 'SUCCEEDED';
        record(older, state);
        await setRunState(pg, older, state);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  const RUN = 'query ($execId: ID!) { teamRun(execId: $execId) { execId state } }';
  const readers = Array.from({ length: 3 }, async () => {
    while (running()) {
      const execId = runs[Math.floor(Math.random() * runs.length)];
      if (!execId) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      const asked = Date.now();
      const data = (await post(RUN, { execId })) as
        | { teamRun: { state: string } | null }
        | undefined;
      const state = data?.teamRun?.state;
      if (state && !heldWithin(execId, state, asked - TTL_MS - SLACK_MS, Date.now())) {
        figures.stale++;
        if (figures.examples.length < 5) figures.examples.push(`stale ${execId} ${state}`);
      }
    }
  });
  let alias = 0;
  const catalog = (async () => {
    while (running()) {
      alias++;
      await post(
        `{ a${alias}: agents(first: 50) { nodes { name owner description } } t${alias}: teams(first: 50) { nodes { name owner description } } }`,
      );
      figures.maxCacheBytes = Math.max(
        figures.maxCacheBytes,
        await metric(server, 'agentgraph_response_cache_bytes'),
      );
    }
  })();
  const responder = (async () => {
    while (running()) {
      const waiting = runs.filter((id) => history.get(id)?.at(-1)?.state === 'WAITING_FOR_HUMAN');
      const execId = waiting[0];
      if (execId) {
        // RESUMING from when the mutation is sent: the database changes during the request.
        record(execId, 'RESUMING');
        await post(
          'mutation ($execId: ID!) { respondToHuman(execId: $execId, response: "ok") { execId run { state } } }',
          { execId },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  })();
  await Promise.all([writer, ...readers, catalog, responder]);
  const cache = {
    hit: await metric(server, 'agentgraph_response_cache_total', { result: 'hit' }),
    miss: await metric(server, 'agentgraph_response_cache_total', { result: 'miss' }),
    unavailable: await metric(server, 'agentgraph_response_cache_total', {
      result: 'unavailable',
    }),
    failedGet: await metric(server, 'agentgraph_response_cache_errors_total', { operation: 'get' }),
    failedSet: await metric(server, 'agentgraph_response_cache_errors_total', { operation: 'set' }),
    failedInvalidate: await metric(server, 'agentgraph_response_cache_errors_total', {
      operation: 'invalidate',
    }),
  };
  await server.stop(1_000);
  return { label, figures, cache };
}

const results = await Promise.all(targets.map(({ label, env }) => soak(label, env)));
clearInterval(heapSampler);
console.log(`cache fault soak: ${SECONDS} s, TTL ${TTL_MS} ms, history TTL ${POLL_MS} ms`);
for (const line of events) console.log(`  ${line}`);
let failed = rejections.length > 0;
for (const { label, figures, cache } of results) {
  console.log(
    `  ${label}: ${figures.requests} requests, ${figures.errors} with errors, ${figures.stale} stale answers; cache hit ${cache.hit}, miss ${cache.miss}, unavailable ${cache.unavailable}; failed get ${cache.failedGet}, set ${cache.failedSet}, invalidate ${cache.failedInvalidate}` +
      (label === 'memory'
        ? `; largest in-memory cache ${figures.maxCacheBytes} of ${MAX_BYTES} bytes`
        : ''),
  );
  for (const example of figures.examples) console.log(`    ${example.slice(0, 300)}`);
  if (figures.errors > 0 || figures.stale > 0 || figures.maxCacheBytes > MAX_BYTES) failed = true;
}
console.log(
  `  largest heap ${(maxHeap / 1_048_576).toFixed(1)} MiB; unhandled rejections ${rejections.length}`,
);
redis.kill('SIGCONT');
redis.kill('SIGKILL');
process.exit(failed ? 1 : 0);
