/**
 * Soak test (not part of `npm test`): a server on the embedded database in a child process,
 * driven over loopback for SOAK_MINUTES (default 10) by
 *   - query clients: a mix of list, nested and lookup queries, back to back;
 *   - subscribers: graphql-ws and SSE subscriptions, kept open, with the simulator moving
 *     runs through their states;
 *   - one misbehaving client, rotating through a slowloris (headers a byte at a time), a
 *     WebSocket subscriber that never reads, oversized bodies and WebSocket messages, a
 *     reconnect storm and malformed documents.
 * Every SOAK_SAMPLE_SECONDS (default 30) it prints the server's RSS and heap (the least of
 * five scrapes), open file descriptors and subscriptions, and the window's query and /health p99. At the end it stops
 * the load and says whether anything leaked: subscriptions and descriptors must come back
 * to where they started, and the lowest RSS and heap of the second half must not lie above
 * those of the first (by more than 10 %, or 10 MiB of heap, 50 MiB of RSS).
 *
 *   npm run soak                      # 10 minutes
 *   SOAK_MINUTES=1 npm run soak       # a quick look
 */
import type { ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import type { Client } from 'graphql-ws';
import { parseCommand } from '../src/command-line.js';
import { startServer } from './server-process.js';

parseCommand({
  name: 'npm run soak --',
  synopsis: '',
  about: `A server on the embedded database in a child process, driven over loopback by query
clients, graphql-ws and SSE subscribers and one misbehaving client (slowloris, a subscriber
that never reads, oversized bodies and messages, reconnect storms, malformed documents). Prints
RSS, heap, descriptors, subscriptions and p99s per sample, then whether anything leaked.`,
  environment: {
    SOAK_MINUTES: 'how long (default 10; 1 for a quick look)',
    SOAK_SAMPLE_SECONDS: 'between samples (default 30)',
  },
});
// After the command line (src/command-line.ts says why).
const [{ createClient }, { default: WebSocket }] = await Promise.all([
  import('graphql-ws'),
  import('ws'),
]);

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const SAMPLE_MS = Number(process.env.SOAK_SAMPLE_SECONDS ?? 30) * 1000;
const QUERY_CLIENTS = 4;
const WS_SUBSCRIBERS = 20;
const SSE_SUBSCRIBERS = 5;
/** Each misbehaviour runs this long before the next takes over. */
const PHASE_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const QUERIES = [
  '{ agents(first: 20) { totalCount nodes { name owner inputs { title type } } } }',
  '{ teams(first: 10) { nodes { name tools { name toolType } runs(first: 5) { nodes { state tasks { taskName toolCalls { toolName } } } } } } }',
  '{ teamRuns(first: 50, filter: { states: [RUNNING, WAITING_FOR_HUMAN] }) { totalCount nodes { execId state durationMs } } }',
  '{ execStats(first: 20) { nodes { conId endNodeCallCount flowNodeCallCount } } }',
  '{ teams(first: 5) { nodes { name agentCard { name skills { name } } } } }',
  '{ toolCalls(first: 30) { nodes { toolName durationMs taskRun { taskName } } } }',
];

interface Window {
  queryMs: number[];
  healthMs: number[];
  queryErrors: number;
  events: number;
  misbehaviours: number;
}

const newWindow = (): Window => ({
  queryMs: [],
  healthMs: [],
  queryErrors: 0,
  events: 0,
  misbehaviours: 0,
});
let window = newWindow();
let running = true;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const logCounts = { warn: 0, error: 0 };

function startSoakServer(): Promise<{ url: string; child: ChildProcess }> {
  return startServer(
    { SIMULATE: 'true', POLL_INTERVAL_MS: '1000', REQUEST_TIMEOUT_MS: '10000' },
    {
      onStdout: (text) => {
        for (const line of text.split('\n')) {
          if (line.includes('"level":40')) logCounts.warn++;
          if (/"level":(50|60)/.test(line)) logCounts.error++;
        }
      },
      readySeconds: 60,
    },
  );
}

interface Sample {
  readonly minute: number;
  readonly rssMiB: number;
  readonly heapMiB: number;
  readonly fds: number;
  readonly subscriptions: number;
}

async function scrape(url: string): Promise<(name: string) => number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return (name: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

/**
 * Memory is the least of five scrapes 400 ms apart: the heap saw-tooths between
 * collections, and its floor is what a leak raises.
 */
async function sample(url: string, started: number): Promise<Sample> {
  const scrapes: ((name: string) => number)[] = [];
  for (let i = 0; i < 5; i++) {
    scrapes.push(await scrape(url));
    if (i < 4) await sleep(400);
  }
  const least = (name: string) => Math.min(...scrapes.map((value) => value(name)));
  const last = scrapes[scrapes.length - 1] as (name: string) => number;
  return {
    minute: (Date.now() - started) / 60_000,
    rssMiB: least('process_resident_memory_bytes') / 2 ** 20,
    heapMiB: least('nodejs_heap_size_used_bytes') / 2 ** 20,
    fds: last('process_open_fds'),
    subscriptions: last('agentgraph_active_subscriptions'),
  };
}

async function queryLoop(url: string, offset: number): Promise<void> {
  for (let i = offset; running; i++) {
    const query = QUERIES[i % QUERIES.length];
    const start = performance.now();
    try {
      const response = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query }),
      });
      const body = (await response.json()) as { errors?: unknown[] };
      if (!response.ok || body.errors) window.queryErrors++;
    } catch {
      window.queryErrors++;
    }
    window.queryMs.push(performance.now() - start);
  }
}

async function healthLoop(url: string): Promise<void> {
  while (running) {
    const start = performance.now();
    await fetch(`${url}/health`).catch(() => undefined);
    window.healthMs.push(performance.now() - start);
    await sleep(250);
  }
}

const wsUrl = (url: string) => `${url.replace(/^http/, 'ws')}/graphql`;

function wsSubscriber(url: string): Client {
  const client = createClient({ url: wsUrl(url), webSocketImpl: WebSocket, retryAttempts: 5 });
  client.subscribe(
    { query: 'subscription { teamRunChanged { previousState state run { execId teamName } } }' },
    { next: () => window.events++, error: () => {}, complete: () => {} },
  );
  client.subscribe(
    { query: 'subscription { teamsWaitingForHuman { execId waitingSince } }' },
    { next: () => window.events++, error: () => {}, complete: () => {} },
  );
  return client;
}

async function sseSubscriber(url: string, signal: AbortSignal): Promise<void> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query: 'subscription { teamRunChanged { state run { execId } } }' }),
    signal,
  });
  const decoder = new TextDecoder();
  const reader = response.body?.getReader();
  try {
    for (;;) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) return;
      window.events += decoder.decode(chunk.value).split('event: next').length - 1;
    }
  } catch {
    // aborted at the end
  }
}

// The misbehaving client: one behaviour per phase, round-robin.

async function slowloris(url: string, until: number): Promise<void> {
  const { port } = new URL(url);
  const sockets: Socket[] = [];
  for (let i = 0; i < 20; i++) {
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => {});
    socket.write('POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n');
    sockets.push(socket);
  }
  while (Date.now() < until) {
    for (const socket of sockets) if (!socket.destroyed) socket.write('X');
    window.misbehaviours++;
    await sleep(1_000);
  }
  for (const socket of sockets) socket.destroy();
}

async function neverReads(url: string, until: number): Promise<void> {
  const socket = new WebSocket(wsUrl(url), 'graphql-transport-ws');
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ type: 'connection_init' }));
  socket.send(
    JSON.stringify({
      id: '1',
      type: 'subscribe',
      payload: {
        query: 'subscription { teamsWaitingForHuman { execId run { tasks { input result } } } }',
      },
    }),
  );
  // The WebSocket stops reading: whatever the server sends piles up in its buffers.
  (socket as unknown as { _socket: Socket })._socket.pause();
  window.misbehaviours++;
  await sleep(Math.max(0, until - Date.now()));
  socket.terminate();
}

async function oversized(url: string, until: number): Promise<void> {
  const big = 'x'.repeat(5 * 2 ** 20);
  while (Date.now() < until) {
    await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ agents(first: 1) { totalCount } } # ${big}` }),
    })
      .then((response) => response.arrayBuffer())
      .catch(() => undefined);
    const socket = new WebSocket(wsUrl(url), 'graphql-transport-ws');
    socket.on('error', () => {});
    await new Promise((resolve) => {
      socket.once('open', () => {
        socket.send(JSON.stringify({ type: 'connection_init' }));
        socket.send(big, () => resolve(undefined));
      });
      socket.once('close', resolve);
    });
    socket.terminate();
    window.misbehaviours++;
    await sleep(500);
  }
}

async function reconnectStorm(url: string, until: number): Promise<void> {
  while (Date.now() < until) {
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        const socket = new WebSocket(wsUrl(url), 'graphql-transport-ws');
        socket.on('error', () => {});
        await new Promise((resolve) => {
          socket.once('open', () => {
            socket.send(JSON.stringify({ type: 'connection_init' }));
            socket.send(
              JSON.stringify({
                id: '1',
                type: 'subscribe',
                payload: { query: 'subscription { teamRunChanged { state } }' },
              }),
            );
            setTimeout(resolve, 20);
          });
          socket.once('close', resolve);
        });
        socket.terminate();
        window.misbehaviours++;
      }),
    );
  }
}

async function malformed(url: string, until: number): Promise<void> {
  const bodies = [
    '{"query": "{ agents(first: 1) { totalCount }"',
    JSON.stringify({
      query: `{ ${'teams(first: 1) { nodes { runs(first: 1) { nodes { team { '.repeat(20)} } }`,
    }),
    JSON.stringify({ query: '{ agents(first: 1000000) { totalCount } }' }),
    JSON.stringify({
      query: `{ ${Array.from({ length: 500 }, (_, i) => `a${i}: __typename`).join(' ')} }`,
    }),
  ];
  while (Date.now() < until) {
    for (const body of bodies) {
      await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
        .then((response) => response.arrayBuffer())
        .catch(() => undefined);
      window.misbehaviours++;
    }
  }
}

const MISBEHAVIOURS = [slowloris, neverReads, oversized, reconnectStorm, malformed];

async function misbehave(url: string): Promise<void> {
  for (let i = 0; running; i++) {
    const behaviour = MISBEHAVIOURS[i % MISBEHAVIOURS.length];
    await behaviour?.(url, Date.now() + PHASE_MS).catch(() => undefined);
  }
}

/** Least-squares slope of y over x. */
function slope(points: readonly [number, number][]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const num = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const den = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

const fixed = (value: number, digits = 1) => value.toFixed(digits).padStart(7);

async function main(): Promise<void> {
  const { url, child } = await startSoakServer();
  const baseline = await sample(url, Date.now());
  console.log(
    `soak: ${MINUTES} min against ${url} (embedded, simulator on); ${QUERY_CLIENTS} query clients, ${WS_SUBSCRIBERS} WebSocket + ${SSE_SUBSCRIBERS} SSE subscribers, one misbehaving client`,
  );
  console.log(
    `baseline: RSS ${baseline.rssMiB.toFixed(1)} MiB, heap ${baseline.heapMiB.toFixed(1)} MiB, ${baseline.fds} fds`,
  );
  console.log(
    ' minute  RSS MiB heap MiB     fds    subs queries  errors q p50 ms q p99 ms h p99 ms  events misbeh.',
  );
  const started = Date.now();
  const abort = new AbortController();
  const subscribers = Array.from({ length: WS_SUBSCRIBERS }, () => wsSubscriber(url));
  const sse = Array.from({ length: SSE_SUBSCRIBERS }, () => sseSubscriber(url, abort.signal));
  const loops = [
    ...Array.from({ length: QUERY_CLIENTS }, (_, i) => queryLoop(url, i)),
    healthLoop(url),
    misbehave(url),
  ];
  const samples: Sample[] = [];
  const windows: Window[] = [];
  const end = started + MINUTES * 60_000;
  while (Date.now() < end) {
    await sleep(Math.min(SAMPLE_MS, end - Date.now()));
    const done = window;
    window = newWindow();
    const s = await sample(url, started);
    samples.push(s);
    windows.push(done);
    console.log(
      [
        fixed(s.minute),
        fixed(s.rssMiB),
        fixed(s.heapMiB),
        fixed(s.fds, 0),
        fixed(s.subscriptions, 0),
        fixed(done.queryMs.length, 0),
        fixed(done.queryErrors, 0),
        fixed(percentile(done.queryMs, 50)),
        fixed(percentile(done.queryMs, 99)),
        fixed(percentile(done.healthMs, 99)),
        fixed(done.events, 0),
        fixed(done.misbehaviours, 0),
      ].join(' '),
    );
  }

  running = false;
  abort.abort();
  await Promise.all(subscribers.map((client) => client.dispose()));
  await Promise.allSettled([...loops, ...sse]);
  // Let the server notice the closed sockets and end their subscriptions.
  let after = await sample(url, started);
  for (let i = 0; i < 40 && (after.subscriptions > 0 || after.fds > baseline.fds + 5); i++) {
    await sleep(500);
    after = await sample(url, started);
  }
  // A leak raises the floor the heap falls back to; compare each half's lowest sample.
  const firstHalf = samples.filter((s) => s.minute < MINUTES / 2);
  const secondHalf = samples.filter((s) => s.minute >= MINUTES / 2);
  const floor = (list: readonly Sample[], of: (s: Sample) => number) => Math.min(...list.map(of));
  const heapGrowth = floor(secondHalf, (s) => s.heapMiB) - floor(firstHalf, (s) => s.heapMiB);
  const rssGrowth = floor(secondHalf, (s) => s.rssMiB) - floor(firstHalf, (s) => s.rssMiB);
  const rssSlope = slope(secondHalf.map((s) => [s.minute, s.rssMiB]));
  const heapSlope = slope(secondHalf.map((s) => [s.minute, s.heapMiB]));
  const all = windows.flatMap((w) => w.queryMs);
  const health = windows.flatMap((w) => w.healthMs);
  const queries = all.length;
  const errors = windows.reduce((sum, w) => sum + w.queryErrors, 0);
  console.log(
    `\nqueries: ${queries} (${errors} errors), p50 ${percentile(all, 50).toFixed(1)} ms, p99 ${percentile(all, 99).toFixed(1)} ms; /health p99 ${percentile(health, 99).toFixed(1)} ms; events ${windows.reduce((sum, w) => sum + w.events, 0)}; server log lines: ${logCounts.warn} warn, ${logCounts.error} error`,
  );
  console.log(
    `after the load: ${after.subscriptions} subscriptions, ${after.fds} fds (baseline ${baseline.fds}), RSS ${after.rssMiB.toFixed(1)} MiB, heap ${after.heapMiB.toFixed(1)} MiB`,
  );
  const signed = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(2)}`;
  console.log(
    `floor, second half vs first: heap ${signed(heapGrowth)} MiB, RSS ${signed(rssGrowth)} MiB; second-half trend: heap ${signed(heapSlope)} MiB/min, RSS ${signed(rssSlope)} MiB/min`,
  );
  const leaks: string[] = [];
  if (after.subscriptions !== 0) leaks.push(`${after.subscriptions} subscriptions still open`);
  if (after.fds > baseline.fds + 5) leaks.push(`${after.fds - baseline.fds} more descriptors`);
  // Caches (parsed documents, A2A cards) fill in the first minutes and then stay put.
  const heapFloor = floor(firstHalf, (s) => s.heapMiB);
  const rssFloor = floor(firstHalf, (s) => s.rssMiB);
  if (heapGrowth > Math.max(10, heapFloor * 0.1))
    leaks.push(`heap floor rose by ${heapGrowth.toFixed(1)} MiB`);
  if (rssGrowth > Math.max(50, rssFloor * 0.1))
    leaks.push(`RSS floor rose by ${rssGrowth.toFixed(1)} MiB`);
  console.log(leaks.length === 0 ? 'verdict: nothing leaks' : `verdict: LEAK? ${leaks.join('; ')}`);
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  process.exit(leaks.length === 0 ? 0 : 1);
}

await main();
