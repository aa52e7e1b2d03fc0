/**
 * Live-subscription benchmark: delay from a state change to delivery, and server memory per
 * idle WebSocket subscriber.
 *
 *   npx tsx bench/subscribers.ts
 *
 * Environment: POLL_INTERVAL_MS (2000), TRANSITIONS (50), SUBSCRIBERS (1000 per step, two
 * steps), EMBEDDED_LATENCY_MS (0; models a remote database for the delay part).
 *
 *   npx tsx bench/subscribers.ts delay | memory     (one part only)
 *
 * The delay part runs the server in this process (the bench writes the transitions into its
 * embedded database) with one graphql-ws subscriber. The memory part runs the server in a
 * child process, so that its memory holds no client, and reads RSS and V8 heap used from
 * /metrics after two steps of idle subscribers, each on its own connection; then, in a new
 * process, the same number multiplexed over 10 connections.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { type Client, createClient } from 'graphql-ws';
import pino from 'pino';
import WebSocket from 'ws';
import { loadConfig } from '../src/config.js';
import { mulberry32 } from '../src/db/embedded/demo-data.js';
import { setRunState, startRun } from '../src/db/embedded/simulator.js';
import { createServer } from '../src/server.js';

const INTERVAL = Number(process.env.POLL_INTERVAL_MS ?? 2000);
const TRANSITIONS = Number(process.env.TRANSITIONS ?? 50);
const SUBSCRIBERS = Number(process.env.SUBSCRIBERS ?? 1000);
const LATENCY = process.env.EMBEDDED_LATENCY_MS ?? '0';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

function client(url: string): Client {
  return createClient({
    url: `${url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: false,
  });
}

async function delays(): Promise<void> {
  const config = loadConfig({
    PORT: '0',
    SIMULATE: 'false',
    POLL_INTERVAL_MS: String(INTERVAL),
    EMBEDDED_LATENCY_MS: LATENCY,
  });
  const server = await createServer(config, pino({ level: 'warn' }));
  const url = await server.start();
  const pg = server.database.embedded?.pg;
  if (!pg) throw new Error('the delay bench needs the embedded database');

  const runs: string[] = [];
  for (let i = 0; i < TRANSITIONS; i++) {
    const execId = randomUUID().replaceAll('-', '').toUpperCase();
    await startRun(pg, { owner: 'APP_USER', teamName: 'REPORT_SUMMARY_AGENT_TEAM', execId });
    runs.push(execId);
  }
  const changedAt = new Map<string, number>();
  const delivered = new Map<string, number>();
  const ws = client(url);
  const ready = new Promise<void>((resolve) => ws.on('connected', () => resolve()));
  ws.subscribe<{ teamRunChanged: { run: { execId: string } } }>(
    {
      query: `subscription { teamRunChanged(filter: { states: [WAITING_FOR_HUMAN] }) {
        run { execId } } }`,
    },
    {
      next: ({ data }) => {
        const id = data?.teamRunChanged.run.execId;
        if (id && !delivered.has(id)) delivered.set(id, performance.now());
      },
      error: (error) => console.error(error),
      complete: () => {},
    },
  );
  await ready;
  // Past the baseline cycle, so that every change below is a transition.
  await sleep(INTERVAL * 2);

  // Changes at pseudo-random moments relative to the poll cycle, like real ones.
  const random = mulberry32(42);
  for (const execId of runs) {
    await sleep(random() * INTERVAL * 1.1);
    await setRunState(pg, execId, 'WAITING_FOR_HUMAN');
    changedAt.set(execId, performance.now());
  }
  const deadline = Date.now() + INTERVAL * 3 + 5_000;
  while (delivered.size < runs.length && Date.now() < deadline) await sleep(50);

  const measured = runs
    .filter((id) => delivered.has(id))
    .map((id) => (delivered.get(id) as number) - (changedAt.get(id) as number))
    .sort((a, b) => a - b);
  const polls = (await server.metrics.dbStatements.get()).values.find(
    (v) => v.labels.statement === 'teamRuns.live',
  )?.value;
  console.log(
    JSON.stringify({
      part: 'delay',
      pollIntervalMs: INTERVAL,
      embeddedLatencyMs: Number(LATENCY),
      transitions: runs.length,
      delivered: measured.length,
      medianMs: Math.round(percentile(measured, 50)),
      p99Ms: Math.round(percentile(measured, 99)),
      maxMs: Math.round(measured.at(-1) ?? Number.NaN),
      pollStatements: polls,
    }),
  );
  await ws.dispose();
  await server.stop();
}

interface MemoryStep {
  readonly subscribers: number;
  readonly connections: number;
  readonly rssMiB: number;
  readonly heapUsedMiB: number;
}

/** A fresh server process; `connections` × `perConnection` idle subscribers, twice. */
async function memory(connections: number, perConnection: number): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: new URL('..', import.meta.url),
    env: {
      ...process.env,
      PORT: '0',
      SIMULATE: 'false',
      LOG_LEVEL: 'info',
      POLL_INTERVAL_MS: String(INTERVAL),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve) =>
    lines.on('line', (line) => {
      const entry = JSON.parse(line) as { url?: string; msg?: string };
      if (entry.msg?.startsWith('agent-graph ready') && entry.url) {
        resolve(entry.url.replace(/\/graphql$/, ''));
      }
    }),
  );
  const scrape = async () => {
    const text = await (await fetch(`${url}/metrics`)).text();
    const value = (name: string) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(`${name} `))
          ?.split(' ')[1],
      );
    return {
      subscriptions: value('agentgraph_active_subscriptions'),
      rssMiB: value('process_resident_memory_bytes') / 2 ** 20,
      heapUsedMiB: value('nodejs_heap_size_used_bytes') / 2 ** 20,
    };
  };
  const settle = async (subscriptions: number) => {
    while ((await scrape()).subscriptions < subscriptions) await sleep(100);
    // Let allocation and collection settle before reading memory.
    await sleep(3_000);
    return scrape();
  };
  const query = `subscription { teamRunChanged(filter: { teamName: "ORDER_SUPPORT_TEAM" }) {
    previousState state run { execId tasks { state } } } }`;
  const sink = { next: () => {}, error: (e: unknown) => console.error(e), complete: () => {} };
  const clients: Client[] = [];
  const open = async (count: number, each: number) => {
    for (let i = 0; i < count; i++) {
      const c = client(url);
      clients.push(c);
      for (let s = 0; s < each; s++) c.subscribe({ query }, sink);
      if (i % 100 === 99) await sleep(50);
    }
  };

  // Warm-up: one subscriber, so the poller, the schema and the code paths are in place.
  await open(1, 1);
  const base = await settle(1);
  const steps: MemoryStep[] = [];
  for (let step = 1; step <= 2; step++) {
    await open(connections, perConnection);
    const subscribers = step * connections * perConnection;
    const now = await settle(subscribers + 1);
    steps.push({
      subscribers,
      connections: step * connections,
      rssMiB: Math.round(now.rssMiB),
      heapUsedMiB: Math.round(now.heapUsedMiB),
    });
  }
  const last = steps.at(-1) as MemoryStep;
  const per1000 = (mib: number) => Math.round((mib / (last.subscribers / 1000)) * 10) / 10;
  console.log(
    JSON.stringify({
      part: 'memory',
      perConnection,
      base: { rssMiB: Math.round(base.rssMiB), heapUsedMiB: Math.round(base.heapUsedMiB) },
      steps,
      rssMiBPer1000: per1000(last.rssMiB - base.rssMiB),
      heapUsedMiBPer1000: per1000(last.heapUsedMiB - base.heapUsedMiB),
    }),
  );
  await Promise.all(clients.map((c) => c.dispose()));
  child.kill('SIGTERM');
}

const part = process.argv[2];
if (!part || part === 'delay') await delays();
if (!part || part === 'memory') {
  await memory(SUBSCRIBERS, 1);
  await memory(10, SUBSCRIBERS / 10);
}
