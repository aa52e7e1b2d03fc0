/**
 * `npm run bench:anchor`: agent-graph against the anchor, PostGraphile over the machine's
 * PostgreSQL serving the very same rows, side by side in alternating rounds; prints the
 * median req/s, p50 and p99 of each and their ratio, and writes bench/results-anchor.json.
 *
 * PostGraphile is a development tool here, never a product dependency: the command copies the
 * anchor kit (ANCHOR_KIT, default /work/shared/anchors/postgraphile) to ANCHOR_DIR (default
 * $TMPDIR/agent-graph-anchor), installs it there with `npm ci` once, (re)creates the database
 * of ANCHOR_DATABASE_URL from the kit's schema.sql and copies agent-graph's demo rows into it
 * with the kit's importer, so both servers answer the kit's dashboard query from the same rows.
 * ANCHOR_ROUNDS (default 4) rounds of ANCHOR_DURATION_S (default 5) seconds per run; the
 * order of the servers alternates between rounds. ANCHOR_BASELINE=<checkout> adds that
 * checkout's agent-graph (e.g. main) as a third server, to measure a change against it in the
 * same rounds.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { freePort, startServer } from './server-process.js';

const KIT = process.env.ANCHOR_KIT ?? '/work/shared/anchors/postgraphile';
const DIR = process.env.ANCHOR_DIR ?? join(tmpdir(), 'agent-graph-anchor');
const DATABASE_URL = process.env.ANCHOR_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/anchor';
const ROUNDS = Number(process.env.ANCHOR_ROUNDS ?? 4);
const DURATION_S = Number(process.env.ANCHOR_DURATION_S ?? 5);
const RUNS = [
  { query: 'floor', connections: 32 },
  { query: 'dashboard', connections: 1 },
  { query: 'dashboard', connections: 32 },
] as const;

const BASELINE = process.env.ANCHOR_BASELINE;

type Server = 'agent-graph' | 'PostGraphile' | 'baseline';

interface Measure {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

function install(): void {
  if (!existsSync(join(DIR, 'node_modules', 'postgraphile'))) {
    cpSync(KIT, DIR, { recursive: true });
    execFileSync('chmod', ['-R', 'u+w', DIR]);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: DIR,
      stdio: 'inherit',
    });
  }
  const database = new URL(DATABASE_URL);
  const admin = new URL(DATABASE_URL);
  admin.pathname = '/postgres';
  const name = database.pathname.slice(1);
  execFileSync('psql', [admin.href, '-qc', `DROP DATABASE IF EXISTS "${name}"`]);
  execFileSync('psql', [admin.href, '-qc', `CREATE DATABASE "${name}"`]);
  execFileSync('psql', [DATABASE_URL, '-q', '-f', join(DIR, 'schema.sql')], { stdio: 'ignore' });
}

async function startPostGraphile(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      '--import',
      './polyfill.mjs',
      'node_modules/postgraphile/dist/cli-run.js',
      '-C',
      'graphile.config.mjs',
    ],
    {
      cwd: DIR,
      env: { ...process.env, DATABASE_URL, PORT: String(port), NODE_ENV: 'production' },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const url = `http://127.0.0.1:${port}/graphql`;
  for (let i = 0; i < 300; i++) {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ __typename }"}',
      });
      if (response.ok) return { url, child };
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  child.kill();
  throw new Error('PostGraphile did not answer in 30 s');
}

async function measure(url: string, query: string, connections: number): Promise<Measure> {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
    connections,
    duration: DURATION_S,
    verifyBody: (text) => !text?.includes('"errors"'),
  });
  // Requests still queued in the server when autocannon stops would be charged to the next
  // run (of any server, on this shared CPU): wait until one more request gets through.
  await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"query":"{ __typename }"}',
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx + result.mismatches,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return sorted.length % 2
    ? (sorted[Math.floor(middle)] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

install();
const ours = JSON.parse(readFileSync(join(DIR, 'queries-agent-graph.json'), 'utf8'));
const queries: Record<Server, Record<string, string>> = {
  'agent-graph': ours,
  baseline: ours,
  PostGraphile: JSON.parse(readFileSync(join(DIR, 'queries.json'), 'utf8')),
};
const agentGraph = await startServer({});
const anchor = await startPostGraphile();
const baseline = BASELINE ? await startServer({}, { cwd: BASELINE }) : null;
const children = [agentGraph.child, anchor.child, ...(baseline ? [baseline.child] : [])];
const urls: Partial<Record<Server, string>> = {
  'agent-graph': `${agentGraph.url}/graphql`,
  PostGraphile: anchor.url,
  ...(baseline ? { baseline: `${baseline.url}/graphql` } : {}),
};
const servers = Object.keys(urls) as Server[];
const measured = new Map<string, Measure[]>();
try {
  execFileSync(process.execPath, ['import-from-agent-graph.mjs', `${agentGraph.url}/graphql`], {
    cwd: DIR,
    env: { ...process.env, DATABASE_URL },
    stdio: 'inherit',
  });
  // Warm each server's JIT and caches first.
  for (const server of servers) {
    for (const { query } of RUNS)
      await measure(urls[server] ?? '', queries[server][query] ?? '', 4);
  }
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? servers : [...servers].reverse();
    for (const { query, connections } of RUNS) {
      for (const server of order) {
        const m = await measure(urls[server] ?? '', queries[server][query] ?? '', connections);
        const key = `${server} ${query} ${connections}`;
        measured.set(key, [...(measured.get(key) ?? []), m]);
        process.stderr.write(
          `  round ${round + 1} ${key}: ${m.rps.toFixed(0)} req/s, p99 ${m.p99} ms, ${m.errors} errors\n`,
        );
      }
    }
  }
} finally {
  for (const child of children) child.kill('SIGTERM');
}

const summary = RUNS.map(({ query, connections }) => {
  const of = (server: Server) => {
    const ms = measured.get(`${server} ${query} ${connections}`) ?? [];
    return {
      rps: median(ms.map((m) => m.rps)),
      p50: median(ms.map((m) => m.p50)),
      p99: median(ms.map((m) => m.p99)),
      errors: ms.reduce((sum, m) => sum + m.errors, 0),
    };
  };
  const agentGraph = of('agent-graph');
  const postGraphile = of('PostGraphile');
  const base = BASELINE ? of('baseline') : null;
  return {
    query,
    connections,
    agentGraph,
    postGraphile,
    ratio: agentGraph.rps / postGraphile.rps,
    baseline: base,
    ratioToBaseline: base ? agentGraph.rps / base.rps : null,
  };
});
const cell = (m: Measure) =>
  `${m.rps.toFixed(0)} req/s, p50 ${m.p50.toFixed(0)} ms, p99 ${m.p99.toFixed(0)} ms, ${m.errors} errors`;
process.stdout.write(
  `medians of ${ROUNDS} alternating rounds of ${DURATION_S} s\n\n| query | conns | agent-graph | PostGraphile | ratio |${BASELINE ? ' baseline | ÷ baseline |' : ''}\n| --- | --- | --- | --- | --- |${BASELINE ? ' --- | --- |' : ''}\n${summary
    .map(
      (s) =>
        `| ${s.query} | ${s.connections} | ${cell(s.agentGraph)} | ${cell(s.postGraphile)} | ${s.ratio.toFixed(2)}× |${s.baseline ? ` ${cell(s.baseline)} | ${(s.ratioToBaseline ?? 0).toFixed(2)}× |` : ''}`,
    )
    .join('\n')}\n`,
);
await writeFile(
  new URL('./results-anchor.json', import.meta.url),
  `${JSON.stringify({ date: new Date().toISOString(), node: process.version, rounds: ROUNDS, durationSeconds: DURATION_S, summary, runs: Object.fromEntries(measured) }, null, 2)}\n`,
);
