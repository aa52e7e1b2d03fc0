/**
 * `npm run bench`: loads a real agent-graph process over loopback the way its users do and
 * prints requests/s, latency, database statements per request and each throughput as a ratio
 * to the `{ __typename }` floor measured in the same run; then idle graphql-ws subscribers
 * and bursts of changes (bench/subscribers.ts); then how long stop() takes after the last
 * response (bench/stop.ts). Writes bench/results.json.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { runStop } from './stop.js';
import { runSubscribers, type SubscriberRow } from './subscribers.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const CONNECTIONS = 32;
const SUBSCRIBERS = (process.env.BENCH_SUBSCRIBERS ?? '1000,5000').split(',').map(Number);
const POLL_INTERVAL_MS = Number(process.env.POLL_INTERVAL_MS ?? 2000);

interface Scenario {
  readonly name: string;
  readonly query: string;
  readonly variables?: Record<string, unknown>;
}

const SCENARIOS: Scenario[] = [
  { name: 'floor', query: '{ __typename }' },
  {
    name: 'lookup',
    query:
      'query Lookup { agent(name: "ORDER_ASSISTANT") { name agentId owner createTime inputs { title type } callContract { inputFormat requiredKeys nameMatches } } }',
  },
  {
    name: 'dashboard',
    query: `query Dashboard { teams(first: 20) { edges { node { name tools { name } agentCard { name skills { name } }
      runs(first: 10) { edges { node { state tasks { taskName agent { name }
        toolCalls { toolName } } } } } } } } }`,
  },
  {
    name: 'stats',
    query: `query Stats {
      execStatSummary { executionCount totalTimeAvgMs totalTimeP50Ms totalTimeP95Ms totalTimeP99Ms totalTimeMaxMs
        totals { inputTokens outputTokens llmCallCount toolCallCount } }
      diagnose: execStats(first: 100, filter: { minTotalTimeMs: 2000 }, orderBy: { field: TOTAL_TIME, direction: DESC }) {
        nodes { conId totalTimeExecMs totalTimeLlmMs totalTimeToolMs llmTimePct toolTimePct
          llmCallCount toolCallCount inputTokens outputTokens } } }`,
  },
];

interface Row {
  scenario: string;
  latencyMs: number;
  connections: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  statementsPerRequest: number;
  responseBytes: number;
  ratioToFloor: number | null;
  errors: number;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function startServer(
  env: Record<string, string>,
): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      SIMULATE: 'false',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${url}/ready`)).ok) return { url, child };
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  child.kill();
  throw new Error('the server did not become ready in 30 s');
}

async function statementCount(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('agentgraph_db_statements_total'))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

async function load(url: string, scenario: Scenario, connections: number, seconds: number) {
  const body = JSON.stringify({ query: scenario.query, variables: scenario.variables });
  const probe = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const probeText = await probe.text();
  if (!probe.ok || probeText.includes('"errors"')) {
    throw new Error(`${scenario.name} fails: ${probeText.slice(0, 300)}`);
  }
  // Counted on one request alone, once the previous run's requests (still in the server
  // when autocannon stops) have finished: they would be charged to this one.
  let before = await statementCount(url);
  for (;;) {
    await sleep(200);
    const now = await statementCount(url);
    if (now === before) break;
    before = now;
  }
  await (
    await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
  ).text();
  const statements = (await statementCount(url)) - before;
  const result = await autocannon({
    url: `${url}/graphql`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections,
    duration: seconds,
  });
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    statementsPerRequest: statements,
    responseBytes: Buffer.byteLength(probeText),
    errors: result.errors + result.non2xx,
  };
}

async function runSuite(
  latencyMs: number,
  scenarios: Scenario[],
  floor: number | null,
): Promise<Row[]> {
  const { url, child } = await startServer({ EMBEDDED_LATENCY_MS: String(latencyMs) });
  const rows: Row[] = [];
  try {
    // Warm the JIT, the caches and the snapshot's pages before measuring.
    for (const scenario of scenarios) await load(url, scenario, 4, 1);
    let floorRps = floor;
    for (const scenario of scenarios) {
      for (const connections of [CONNECTIONS, 1]) {
        const measured = await load(
          url,
          scenario,
          connections,
          connections === 1 ? Math.max(2, DURATION_S / 2) : DURATION_S,
        );
        if (scenario.name === 'floor' && connections === CONNECTIONS)
          floorRps = measured.requestsPerSecond;
        rows.push({
          scenario: scenario.name,
          latencyMs,
          connections,
          ...measured,
          ratioToFloor: floorRps ? measured.requestsPerSecond / floorRps : null,
        });
        process.stderr.write(
          `  ${scenario.name} (latency ${latencyMs} ms, ${connections} conn): ${measured.requestsPerSecond.toFixed(0)} req/s\n`,
        );
      }
    }
  } finally {
    child.kill('SIGTERM');
  }
  return rows;
}

function table(header: string[], lines: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const format = (cells: string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [format(header), format(widths.map((w) => '-'.repeat(w))), ...lines.map(format)].join(
    '\n',
  );
}

function httpTable(rows: Row[]): string {
  return table(
    [
      'scenario',
      'db latency',
      'conns',
      'req/s',
      'p50 ms',
      'p99 ms',
      'stmts/req',
      'KB/resp',
      '% of floor',
    ],
    rows.map((r) => [
      r.scenario,
      `${r.latencyMs} ms`,
      String(r.connections),
      r.requestsPerSecond.toFixed(0),
      r.p50Ms.toFixed(1),
      r.p99Ms.toFixed(1),
      r.statementsPerRequest.toFixed(2),
      (r.responseBytes / 1024).toFixed(1),
      r.ratioToFloor === null ? '' : `${(100 * r.ratioToFloor).toFixed(2)} %`,
    ]),
  );
}

function subscriberTable(rows: SubscriberRow[]): string {
  return table(
    [
      'subscribers',
      'interval',
      'deliveries',
      'p50 ms',
      'p99 ms',
      'max ms',
      'polls/cycle',
      'stmts/cycle',
      'RSS MiB',
      'KiB/subscriber',
    ],
    rows.map((r) => [
      String(r.subscribers),
      `${r.pollIntervalMs} ms`,
      String(r.deliveries),
      r.medianMs.toFixed(0),
      r.p99Ms.toFixed(0),
      r.maxMs.toFixed(0),
      r.pollStatementsPerCycle.toFixed(2),
      r.statementsPerCycle.toFixed(2),
      r.rssMiB.toFixed(0),
      r.rssKiBPerSubscriber.toFixed(1),
    ]),
  );
}

const started = Date.now();
const base = await runSuite(0, SCENARIOS, null);
const floor =
  base.find((r) => r.scenario === 'floor' && r.connections === CONNECTIONS)?.requestsPerSecond ??
  null;
const remote = await runSuite(
  5,
  SCENARIOS.filter((s) => s.name === 'dashboard' || s.name === 'stats'),
  floor,
);
const rows = [...base, ...remote];
const subscribers = await runSubscribers(SUBSCRIBERS, POLL_INTERVAL_MS, (line) =>
  process.stderr.write(line),
);
const stop = await runStop();
const results = {
  date: new Date().toISOString(),
  node: process.version,
  durationSeconds: DURATION_S,
  rows,
  subscribers,
  stop,
  elapsedSeconds: Math.round((Date.now() - started) / 1000),
};
await writeFile(
  new URL('./results.json', import.meta.url),
  `${JSON.stringify(results, null, 2)}\n`,
);
process.stdout.write(
  `${httpTable(rows)}\n\n${subscriberTable(subscribers)}\n\nstop() after the last response: ${stop.afterLastResponseMs} ms\n\nwritten to bench/results.json in ${results.elapsedSeconds} s\n`,
);
