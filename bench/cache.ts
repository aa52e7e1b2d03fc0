/**
 * `npm run bench:cache`: many clients asking for the same dashboard (REPEATED_DASHBOARD in
 * bench/scenarios.ts), against two server processes side by side, one without the response
 * cache and one with RESPONSE_CACHE_TTL_MS, in alternating rounds. Both simulate runs moving
 * through their states (BENCH_SIMULATE=false keeps the history still, the best case of a quiet
 * hour), so the cache is evicted by the poller as it would be in use. Prints
 * requests/s, p99 and database statements per second of each (from agentgraph_db_statements_total,
 * the cached server's poll statement included) and writes bench/results-cache.json.
 */
import { writeFile } from 'node:fs/promises';
import autocannon from 'autocannon';
import { parseCommand } from '../src/command-line.js';
import { REPEATED_DASHBOARD } from './scenarios.js';
import { startServer } from './server-process.js';

parseCommand({
  name: 'npm run bench:cache --',
  synopsis: '',
  about: `Many clients asking for the same dashboard, against two server processes side by side,
one without the response cache and one with it, in alternating rounds, runs moving through
their states: requests/s, p99 and database statements per second of each. Writes
bench/results-cache.json.`,
  environment: {
    BENCH_DURATION_S: 'seconds per round and server (default 5)',
    BENCH_CLIENTS: 'concurrent clients (default 50)',
    BENCH_ROUNDS: 'rounds (default 2)',
    RESPONSE_CACHE_TTL_MS: "the cached server's TTL (default 60000)",
    BENCH_SIMULATE: 'false keeps the history still (default true)',
  },
});

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const TTL_MS = process.env.RESPONSE_CACHE_TTL_MS ?? '60000';
const SIMULATE = process.env.BENCH_SIMULATE ?? 'true';

async function counter(url: string, name: string, label = ''): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(name) && line.includes(label))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

interface Measured {
  readonly requestsPerSecond: number;
  readonly p99Ms: number;
  readonly statementsPerSecond: number;
  readonly hitRatio: number | null;
  readonly errors: number;
}

async function measure(url: string): Promise<Measured> {
  const statements = () => counter(url, 'agentgraph_db_statements_total');
  const hits = () => counter(url, 'agentgraph_response_cache_total', 'result="hit"');
  const misses = () => counter(url, 'agentgraph_response_cache_total', 'result="miss"');
  const before = { statements: await statements(), hits: await hits(), misses: await misses() };
  const started = performance.now();
  const result = await autocannon({
    url: `${url}/graphql`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: REPEATED_DASHBOARD.query }),
    connections: CLIENTS,
    duration: DURATION_S,
    verifyBody: (text) => !text?.includes('"errors"'),
  });
  const seconds = (performance.now() - started) / 1000;
  const looked = (await hits()) - before.hits + ((await misses()) - before.misses);
  return {
    requestsPerSecond: result.requests.average,
    p99Ms: result.latency.p99,
    statementsPerSecond: ((await statements()) - before.statements) / seconds,
    hitRatio: looked > 0 ? ((await hits()) - before.hits) / looked : null,
    errors: result.errors + result.non2xx + result.mismatches,
  };
}

const configs: { name: string; env: Record<string, string> }[] = [
  { name: 'cache off', env: { SIMULATE } },
  { name: `cache on (${TTL_MS} ms)`, env: { SIMULATE, RESPONSE_CACHE_TTL_MS: TTL_MS } },
];
// One after the other, each allowed two minutes: a loaded machine starts them slowly.
const servers: Awaited<ReturnType<typeof startServer>>[] = [];
const rows: { config: string; round: number; measured: Measured }[] = [];
try {
  for (const config of configs) servers.push(await startServer(config.env, { readySeconds: 120 }));
  // Warm-up: the JIT and the embedded database's pages, for both alike.
  for (const { url } of servers) {
    await autocannon({
      url: `${url}/graphql`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: REPEATED_DASHBOARD.query }),
      connections: 4,
      duration: 2,
    });
  }
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [i, config] of configs.entries()) {
      const measured = await measure((servers[i] as { url: string }).url);
      rows.push({ config: config.name, round, measured });
      process.stderr.write(
        `  round ${round}, ${config.name}: ${measured.requestsPerSecond.toFixed(0)} req/s, ${measured.statementsPerSecond.toFixed(1)} statements/s\n`,
      );
    }
  }
} finally {
  for (const { child } of servers) child.kill('SIGTERM');
}

const lines = rows.map(({ config, round, measured: m }) =>
  [
    config,
    String(round),
    m.requestsPerSecond.toFixed(0),
    m.p99Ms.toFixed(1),
    m.statementsPerSecond.toFixed(1),
    (m.statementsPerSecond / Math.max(m.requestsPerSecond, 1)).toFixed(3),
    m.hitRatio === null ? '' : `${(100 * m.hitRatio).toFixed(1)} %`,
    String(m.errors),
  ].join(' | '),
);
const results = {
  date: new Date().toISOString(),
  node: process.version,
  clients: CLIENTS,
  durationSeconds: DURATION_S,
  scenario: REPEATED_DASHBOARD.name,
  rows,
};
await writeFile(
  new URL('./results-cache.json', import.meta.url),
  `${JSON.stringify(results, null, 2)}\n`,
);
process.stdout.write(
  `${CLIENTS} clients, ${REPEATED_DASHBOARD.name}, ${DURATION_S} s per round\n| config | round | req/s | p99 ms | statements/s | statements/req | hits | errors |\n${lines.map((l) => `| ${l} |`).join('\n')}\n\nwritten to bench/results-cache.json\n`,
);
