/**
 * `npm run bench`: loads a real agent-graph process over loopback the way its users do and
 * prints requests/s, latency, database statements per request and each throughput as a ratio
 * to the `{ __typename }` floor measured in the same run; then idle graphql-ws subscribers
 * and bursts of changes (bench/subscribers.ts); then how long stop() takes after the last
 * response (bench/stop.ts). Writes bench/results.json. A failed request (transport error,
 * non-2xx status or a GraphQL `errors` member) is counted in its scenario's `errors`, never
 * the end of the run. `npm run bench -- --only dashboard,lookup` runs only the scenarios
 * named (`subscribers` and `stop` name the last two parts) and writes bench/results-only.json.
 */
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { parseCommand } from '../src/command-line.js';
import { SCENARIOS, type Scenario } from './scenarios.js';
import { startServer } from './server-process.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const CONNECTIONS = 32;
const SUBSCRIBERS = (process.env.BENCH_SUBSCRIBERS ?? '1000,5000').split(',').map(Number);
const POLL_INTERVAL_MS = Number(process.env.POLL_INTERVAL_MS ?? 2000);
const { values } = parseCommand({
  name: 'npm run bench --',
  about: `Loads a real agent-graph process over loopback as its users do: requests/s, latency,
statements per request and each throughput as a ratio to the { __typename } floor of the same
run; then idle graphql-ws subscribers and bursts of changes; then how long stop() takes.
Writes bench/results.json (bench/results-only.json with --only).`,
  options: {
    only: {
      type: 'string',
      placeholder: 'a,b',
      description: `run only these parts: ${SCENARIOS.map((s) => s.name).join(', ')}, subscribers, stop`,
    },
  },
  environment: {
    BENCH_DURATION_S: 'seconds per scenario (default 5)',
    BENCH_SUBSCRIBERS: 'subscriber counts (default 1000,5000)',
    POLL_INTERVAL_MS: 'the server poll interval (default 2000)',
  },
});
// After the command line (src/command-line.ts says why).
const [{ runStop }, { runSubscribers, subscriberTable }] = await Promise.all([
  import('./stop.js'),
  import('./subscribers.js'),
]);
const ONLY = values.only === undefined ? null : new Set(values.only.split(','));
const wanted = (name: string) => ONLY === null || ONLY.has(name);

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
  /** Per statement name: executions per request and mean ms per execution, over the run. */
  statements: Record<string, { perRequest: number; ms: number }>;
}

/** agentgraph_db_statement_duration_seconds: executions and seconds so far, by statement. */
async function statementTimes(url: string): Promise<Map<string, { count: number; sum: number }>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const times = new Map<string, { count: number; sum: number }>();
  for (const line of text.split('\n')) {
    const found =
      /^agentgraph_db_statement_duration_seconds_(sum|count)\{statement="([^"]+)"\} (\S+)$/.exec(
        line,
      );
    if (!found) continue;
    const [, field, name = '', value] = found;
    const entry = times.get(name) ?? { count: 0, sum: 0 };
    entry[field as 'sum' | 'count'] = Number(value);
    times.set(name, entry);
  }
  return times;
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
    process.stderr.write(`  ${scenario.name} answers with an error: ${probeText.slice(0, 300)}\n`);
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
  const timesBefore = await statementTimes(url);
  const result = await autocannon({
    url: `${url}/graphql`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections,
    duration: seconds,
    // A 200 carrying GraphQL errors (a timeout, an upstream failure) is a failed request too.
    verifyBody: (text) => !text?.includes('"errors"'),
  });
  const timesAfter = await statementTimes(url);
  const perStatement: Record<string, { perRequest: number; ms: number }> = {};
  for (const [name, { count, sum }] of timesAfter) {
    const was = timesBefore.get(name) ?? { count: 0, sum: 0 };
    const executions = count - was.count;
    if (executions <= 0) continue;
    perStatement[name] = {
      perRequest: executions / Math.max(1, result.requests.total),
      ms: ((sum - was.sum) * 1000) / executions,
    };
  }
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    statementsPerRequest: statements,
    responseBytes: Buffer.byteLength(probeText),
    errors: result.errors + result.non2xx + result.mismatches,
    statements: perStatement,
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
          `  ${scenario.name} (latency ${latencyMs} ms, ${connections} conn): ${measured.requestsPerSecond.toFixed(0)} req/s, ${measured.errors} errors\n`,
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
      'errors',
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
      String(r.errors),
    ]),
  );
}

/**
 * Database time per statement in the one-connection runs (one request at a time, so the
 * figures are the statements' own, apart from statements one request sends together, which
 * the embedded database runs one after the other).
 */
function statementTable(rows: Row[]): string {
  const lines = rows
    .filter((r) => r.connections === 1)
    .flatMap((r) =>
      Object.entries(r.statements)
        .sort(([, a], [, b]) => b.ms * b.perRequest - a.ms * a.perRequest)
        .map(([name, s]) => [
          r.scenario,
          `${r.latencyMs} ms`,
          name,
          s.perRequest.toFixed(2),
          s.ms.toFixed(2),
          (s.ms * s.perRequest).toFixed(2),
        ]),
    );
  return table(['scenario', 'db latency', 'statement', 'per req', 'ms each', 'ms per req'], lines);
}

const started = Date.now();
const chosen = SCENARIOS.filter((s) => wanted(s.name));
const base = chosen.length > 0 ? await runSuite(0, chosen, null) : [];
const floor =
  base.find((r) => r.scenario === 'floor' && r.connections === CONNECTIONS)?.requestsPerSecond ??
  null;
const remoteScenarios = chosen.filter((s) => s.name === 'dashboard' || s.name === 'stats');
const remote = remoteScenarios.length > 0 ? await runSuite(5, remoteScenarios, floor) : [];
const rows = [...base, ...remote];
const subscribers = wanted('subscribers')
  ? await runSubscribers(SUBSCRIBERS, POLL_INTERVAL_MS, (line) => process.stderr.write(line))
  : [];
const stop = wanted('stop') ? await runStop() : null;
const results = {
  date: new Date().toISOString(),
  node: process.version,
  durationSeconds: DURATION_S,
  rows,
  subscribers,
  stop,
  elapsedSeconds: Math.round((Date.now() - started) / 1000),
};
// A partial run must not overwrite the full run's results.
await writeFile(
  new URL(ONLY ? './results-only.json' : './results.json', import.meta.url),
  `${JSON.stringify(results, null, 2)}\n`,
);
process.stdout.write(
  `${httpTable(rows)}\n\ndatabase time per statement (agentgraph_db_statement_duration_seconds, 1 connection):\n\n${statementTable(rows)}\n\n${subscribers.length > 0 ? `${subscriberTable(subscribers)}\n\n` : ''}${stop ? `stop() after the last response: ${stop.afterLastResponseMs} ms\n\n` : ''}written to ${ONLY ? 'bench/results-only.json' : 'bench/results.json'} in ${results.elapsedSeconds} s\n`,
);
