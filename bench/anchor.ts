/**
 * `npm run bench:anchor`: agent-graph against the anchor, PostGraphile serving the very same
 * rows, side by side in alternating rounds. By default the anchor runs on the engine
 * agent-graph embeds (ANCHOR_ENGINE=pglite): PGlite served over the PostgreSQL protocol by
 * @electric-sql/pglite-socket in its own process, one connection, as the kit's
 * same-engine.sh starts it. ANCHOR_ENGINE=postgres runs it on the machine's PostgreSQL
 * (ANCHOR_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/anchor), the second
 * reference. Prints, per side, the median req/s, p50, p99 and errors of each query, the ratio,
 * and the CPU one dashboard costs per process and thread (/proc, around ANCHOR_CPU_REQUESTS
 * sequential dashboards each round); writes bench/results-anchor.json.
 *
 * PostGraphile is a development tool here, never a product dependency: the command copies the
 * anchor kit (ANCHOR_KIT, default /work/shared/anchors/postgraphile) to ANCHOR_DIR (default
 * $TMPDIR/agent-graph-anchor), installs it there with `npm ci` once, loads the kit's
 * schema.sql and copies agent-graph's demo rows into it with the kit's importer, so both
 * servers answer the kit's dashboard query from the same rows. ANCHOR_ROUNDS (default 4)
 * rounds of ANCHOR_DURATION_S (default 5) seconds per run; the order of the servers alternates
 * between rounds. ANCHOR_BASELINE=<checkout> adds that checkout's agent-graph (e.g. main) as a
 * third server, to measure a change against it in the same rounds. The floor also runs on a
 * bare graphql-yoga server (bench/bare-yoga.ts), the ceiling of agent-graph's floor.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { parseCommand } from '../src/command-line.js';
import { SHAPES } from './anchor-shapes.js';
import { freePort, startServer } from './server-process.js';
import { shareOf, type ThreadShare, threadCpu } from './thread-cpu.js';

const KIT = process.env.ANCHOR_KIT ?? '/work/shared/anchors/postgraphile';
const DIR = process.env.ANCHOR_DIR ?? join(tmpdir(), 'agent-graph-anchor');
const ENGINE = process.env.ANCHOR_ENGINE ?? 'pglite';
const POSTGRES_URL = process.env.ANCHOR_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/anchor';
const ROUNDS = Number(process.env.ANCHOR_ROUNDS ?? 4);
const DURATION_S = Number(process.env.ANCHOR_DURATION_S ?? 5);
const CPU_REQUESTS = Number(process.env.ANCHOR_CPU_REQUESTS ?? 100);
const { values, fail } = parseCommand({
  name: 'npm run bench:anchor --',
  about: `agent-graph against the anchor, PostGraphile serving the very same rows, side by side in
alternating rounds: median req/s, p50, p99 and errors of each query, the ratio, and the CPU one
dashboard costs per process and thread. Writes bench/results-anchor.json.`,
  options: {
    shapes: {
      type: 'boolean',
      description:
        'every shape of bench/anchor-shapes.ts at 1 and 32 connections, CPU per shape (bench/results-anchor-shapes.json)',
    },
    shape: {
      type: 'string',
      placeholder: 'a,b',
      description: `as --shapes, only these shapes (${Object.keys(SHAPES).join(', ')})`,
    },
  },
  environment: {
    ANCHOR_ENGINE: 'pglite (default) or postgres',
    ANCHOR_DATABASE_URL: 'the PostgreSQL of ANCHOR_ENGINE=postgres',
    ANCHOR_KIT: 'the anchor kit (default /work/shared/anchors/postgraphile)',
    ANCHOR_DIR: 'where the kit is installed (default $TMPDIR/agent-graph-anchor)',
    ANCHOR_ROUNDS: 'rounds (default 4)',
    ANCHOR_DURATION_S: 'seconds per query and round (default 5)',
    ANCHOR_CPU_REQUESTS: 'sequential dashboards per round for the CPU figures (default 100)',
    ANCHOR_BASELINE: 'another checkout of agent-graph to run as a third server',
  },
});
/**
 * `--shapes`: every shape of bench/anchor-shapes.ts at 1 and 32 connections, CPU per shape;
 * `--shape a,b`: only those, to measure one lever quickly.
 */
const SHAPES_MODE = values.shapes || values.shape !== undefined;
const SHAPE_NAMES = values.shape?.split(',') ?? Object.keys(SHAPES);
const unknownShapes = SHAPE_NAMES.filter((name) => !(name in SHAPES));
if (unknownShapes.length > 0) {
  fail(`no shape ${unknownShapes.join(', ')}; the shapes are ${Object.keys(SHAPES).join(', ')}`);
}
const RUNS: readonly { query: string; connections: number }[] = SHAPES_MODE
  ? SHAPE_NAMES.flatMap((query) => [
      { query, connections: 1 },
      { query, connections: 32 },
    ])
  : [
      { query: 'floor', connections: 32 },
      { query: 'dashboard', connections: 1 },
      { query: 'dashboard', connections: 32 },
    ];

const BASELINE = process.env.ANCHOR_BASELINE;

type Server = 'agent-graph' | 'PostGraphile' | 'baseline' | 'bare yoga';

interface Measure {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** A side's processes, by label; the CPU of each is read per thread. */
type Processes = Record<string, number>;

function install(): void {
  if (!existsSync(join(DIR, 'node_modules', 'postgraphile'))) {
    cpSync(KIT, DIR, { recursive: true });
    execFileSync('chmod', ['-R', 'u+w', DIR]);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: DIR,
      stdio: 'inherit',
    });
  }
}

/** PGlite's WebAssembly alone takes over 30 s to start on the loaded shared machine. */
const START_SECONDS = 120;

async function waitFor(what: string, ready: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < START_SECONDS * 10; i++) {
    if (await ready().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${what} did not start in ${START_SECONDS} s`);
}

/** The anchor's database: a PGlite socket server of its own, or the machine's PostgreSQL. */
async function startDatabase(): Promise<{ url: string; child: ChildProcess | null }> {
  if (ENGINE === 'postgres') {
    const admin = new URL(POSTGRES_URL);
    admin.pathname = '/postgres';
    const name = new URL(POSTGRES_URL).pathname.slice(1);
    execFileSync('psql', [admin.href, '-qc', `DROP DATABASE IF EXISTS "${name}"`]);
    execFileSync('psql', [admin.href, '-qc', `CREATE DATABASE "${name}"`]);
    return { url: POSTGRES_URL, child: null };
  }
  if (ENGINE !== 'pglite') throw new Error(`ANCHOR_ENGINE is pglite or postgres, not ${ENGINE}`);
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      'node_modules/@electric-sql/pglite-socket/dist/scripts/server.js',
      '--db=memory://',
      '--host=127.0.0.1',
      `--port=${port}`,
      '--max-connections=1',
    ],
    { cwd: DIR, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let log = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    log += text;
  });
  await waitFor('the PGlite socket server', async () => log.includes('listening'));
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres?sslmode=disable`, child };
}

async function answers(url: string): Promise<boolean> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"query":"{ __typename }"}',
  });
  return response.ok;
}

async function startPostGraphile(
  databaseUrl: string,
): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const config = ENGINE === 'pglite' ? 'graphile.pglite.config.mjs' : 'graphile.config.mjs';
  const child = spawn(
    process.execPath,
    ['--import', './polyfill.mjs', 'node_modules/postgraphile/dist/cli-run.js', '-C', config],
    {
      cwd: DIR,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        NODE_ENV: 'production',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const url = `http://127.0.0.1:${port}/graphql`;
  await waitFor('PostGraphile', () => answers(url));
  return { url, child };
}

async function startBareYoga(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/bare-yoga.ts'], {
    env: { ...process.env, PORT: String(port), NODE_ENV: 'production' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}/graphql`;
  await waitFor('bare yoga', () => answers(url));
  return { url, child };
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
  await answers(url);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx + result.mismatches,
  };
}

/** CPU per dashboard of each process of a side, around CPU_REQUESTS sequential requests. */
async function cpuPerRequest(
  url: string,
  query: string,
  processes: Processes,
): Promise<Record<string, ThreadShare>> {
  const body = JSON.stringify({ query });
  const post = async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const text = await response.text();
    if (!response.ok || text.includes('"errors"')) throw new Error(text.slice(0, 300));
  };
  for (let i = 0; i < 5; i++) await post();
  const before = Object.fromEntries(
    Object.entries(processes).map(([label, pid]) => [label, threadCpu(pid)]),
  );
  for (let i = 0; i < CPU_REQUESTS; i++) await post();
  return Object.fromEntries(
    Object.entries(processes).map(([label, pid]) => [
      label,
      shareOf(pid, before[label] ?? new Map(), threadCpu(pid), CPU_REQUESTS),
    ]),
  );
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return sorted.length % 2
    ? (sorted[Math.floor(middle)] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

install();
const shapesOf = (side: 'agentGraph' | 'postGraphile') =>
  Object.fromEntries(Object.entries(SHAPES).map(([name, shape]) => [name, shape[side]]));
const ours = SHAPES_MODE
  ? shapesOf('agentGraph')
  : JSON.parse(readFileSync(join(DIR, 'queries-agent-graph.json'), 'utf8'));
const queries: Record<Server, Record<string, string>> = {
  'agent-graph': ours,
  baseline: ours,
  'bare yoga': { floor: '{ __typename }' },
  PostGraphile: SHAPES_MODE
    ? shapesOf('postGraphile')
    : JSON.parse(readFileSync(join(DIR, 'queries.json'), 'utf8')),
};
/** CPU per request of each side, by shape (`--shapes`). */
const shapeCpu = new Map<string, number[]>();
const children: ChildProcess[] = [];
const measured = new Map<string, Measure[]>();
const cpu = new Map<Server, Record<string, ThreadShare>[]>();
const load = { before: loadavg(), after: loadavg() };
try {
  const agentGraph = await startServer({}, { readySeconds: 180 });
  children.push(agentGraph.child);
  const database = await startDatabase();
  if (database.child) children.push(database.child);
  execFileSync(process.execPath, ['load-schema.mjs'], {
    cwd: DIR,
    env: {
      ...process.env,
      DATABASE_URL: database.url,
      ANCHOR_EXTRA_SQL:
        process.env.ANCHOR_EXTRA_SQL ?? new URL('./anchor-extra.sql', import.meta.url).pathname,
    },
    stdio: 'inherit',
  });
  execFileSync(process.execPath, ['import-from-agent-graph.mjs', `${agentGraph.url}/graphql`], {
    cwd: DIR,
    env: { ...process.env, DATABASE_URL: database.url },
    stdio: 'inherit',
  });
  if (SHAPES_MODE) {
    // A run both sides hold, for the by-id shapes: its execId, and its global id for `node`.
    const ask = () =>
      fetch(`${agentGraph.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: '{ teamRuns(first: 1, filter: { states: [SUCCEEDED] }) { nodes { execId id } } }',
        }),
      });
    // The import above outlasts the server's keep-alive timeout (5 s), which may close the
    // pooled connection of the /ready polls just as this POST takes it ("other side closed",
    // seen under load); fetch does not send a POST again, so it is asked once more.
    const response = await ask().catch(ask);
    const { data } = (await response.json()) as {
      data: { teamRuns: { nodes: { execId: string; id: string }[] } };
    };
    const run = data.teamRuns.nodes[0];
    for (const side of [queries['agent-graph'], queries.PostGraphile]) {
      for (const [name, text] of Object.entries(side)) {
        side[name] = text.replaceAll('$EXEC', run?.execId ?? '').replaceAll('$RUN', run?.id ?? '');
      }
    }
  }
  const anchor = await startPostGraphile(database.url);
  children.push(anchor.child);
  const baseline = BASELINE ? await startServer({}, { cwd: BASELINE, readySeconds: 180 }) : null;
  if (baseline) children.push(baseline.child);
  const yoga = await startBareYoga();
  children.push(yoga.child);
  const urls: Partial<Record<Server, string>> = {
    'agent-graph': `${agentGraph.url}/graphql`,
    PostGraphile: anchor.url,
    ...(baseline ? { baseline: `${baseline.url}/graphql` } : {}),
    'bare yoga': yoga.url,
  };
  const processes: Partial<Record<Server, Processes>> = {
    'agent-graph': { 'agent-graph': agentGraph.child.pid ?? 0 },
    PostGraphile: {
      PostGraphile: anchor.child.pid ?? 0,
      ...(database.child ? { PGlite: database.child.pid ?? 0 } : {}),
    },
    ...(baseline ? { baseline: { baseline: baseline.child.pid ?? 0 } } : {}),
  };
  const servers = Object.keys(urls) as Server[];
  const serving = (query: string) => servers.filter((server) => queries[server][query]);
  // Warm each server's JIT and caches first.
  for (const server of servers) {
    for (const { query } of RUNS) {
      const text = queries[server][query];
      if (text) await measure(urls[server] ?? '', text, 4);
    }
  }
  load.before = loadavg();
  for (let round = 0; round < ROUNDS; round++) {
    const flip = <T>(list: T[]) => (round % 2 === 0 ? list : [...list].reverse());
    for (const { query, connections } of RUNS) {
      for (const server of flip(serving(query))) {
        const m = await measure(urls[server] ?? '', queries[server][query] ?? '', connections);
        const key = `${server} ${query} ${connections}`;
        measured.set(key, [...(measured.get(key) ?? []), m]);
        process.stderr.write(
          `  round ${round + 1} ${key}: ${m.rps.toFixed(0)} req/s, p99 ${m.p99} ms, ${m.errors} errors\n`,
        );
      }
    }
    if (SHAPES_MODE) {
      for (const shape of SHAPE_NAMES) {
        for (const server of flip(
          (['agent-graph', 'PostGraphile', 'baseline'] as Server[]).filter((s) => urls[s]),
        )) {
          const share = await cpuPerRequest(
            urls[server] ?? '',
            queries[server][shape] ?? '',
            processes[server] ?? {},
          );
          const total = Object.values(share).reduce((sum, s) => sum + s.total, 0);
          const key = `${server} ${shape}`;
          shapeCpu.set(key, [...(shapeCpu.get(key) ?? []), total]);
        }
      }
      continue;
    }
    for (const server of flip(Object.keys(processes) as Server[])) {
      const share = await cpuPerRequest(
        urls[server] ?? '',
        queries[server].dashboard ?? '',
        processes[server] ?? {},
      );
      cpu.set(server, [...(cpu.get(server) ?? []), share]);
      process.stderr.write(
        `  round ${round + 1} ${server} CPU per dashboard: ${Object.entries(share)
          .map(([label, s]) => `${label} ${s.total.toFixed(1)} ms`)
          .join(', ')}\n`,
      );
    }
  }
  load.after = loadavg();
} finally {
  for (const child of children) child.kill('SIGTERM');
}

const of = (server: Server, query: string, connections: number): Measure | null => {
  const ms = measured.get(`${server} ${query} ${connections}`) ?? [];
  if (ms.length === 0) return null;
  return {
    rps: median(ms.map((m) => m.rps)),
    p50: median(ms.map((m) => m.p50)),
    p99: median(ms.map((m) => m.p99)),
    errors: ms.reduce((sum, m) => sum + m.errors, 0),
  };
};
const summary = RUNS.map(({ query, connections }) => {
  const agentGraph = of('agent-graph', query, connections);
  const postGraphile = of('PostGraphile', query, connections);
  const base = of('baseline', query, connections);
  const yoga = of('bare yoga', query, connections);
  return {
    query,
    connections,
    agentGraph,
    postGraphile,
    ratio: (agentGraph?.rps ?? 0) / (postGraphile?.rps ?? 1),
    baseline: base,
    ratioToBaseline: base ? (agentGraph?.rps ?? 0) / base.rps : null,
    bareYoga: yoga,
    ratioToBareYoga: yoga ? (agentGraph?.rps ?? 0) / yoga.rps : null,
  };
});
/** Median over the rounds of each process's and thread's CPU per dashboard. */
const cpuSummary = Object.fromEntries(
  [...cpu].map(([server, rounds]) => {
    const labels = Object.keys(rounds[0] ?? {});
    const perProcess = Object.fromEntries(
      labels.map((label) => {
        const pick = (field: keyof ThreadShare) =>
          median(rounds.map((r) => r[label]?.[field] ?? 0));
        return [
          label,
          {
            main: pick('main'),
            busiestOther: pick('busiestOther'),
            rest: pick('rest'),
            total: pick('total'),
          },
        ];
      }),
    );
    const total = median(
      rounds.map((r) => Object.values(r).reduce((sum, share) => sum + share.total, 0)),
    );
    return [server, { perProcess, total }];
  }),
);
const cell = (m: Measure | null) =>
  m
    ? `${m.rps.toFixed(0)} req/s, p50 ${m.p50.toFixed(0)} ms, p99 ${m.p99.toFixed(0)} ms, ${m.errors} errors`
    : '—';
const ms = (value: number) => value.toFixed(1);
const loadText = (values: number[]) => values.map((v) => v.toFixed(1)).join(' ');
process.stdout.write(
  `anchor on ${ENGINE}; medians of ${ROUNDS} alternating rounds of ${DURATION_S} s; load average ${loadText(load.before)} before, ${loadText(load.after)} after\n\n| query | conns | agent-graph | PostGraphile | ratio |${BASELINE ? ' baseline | ÷ baseline |' : ''} bare yoga | ÷ bare yoga |\n| --- | --- | --- | --- | --- |${BASELINE ? ' --- | --- |' : ''} --- | --- |\n${summary
    .map(
      (s) =>
        `| ${s.query} | ${s.connections} | ${cell(s.agentGraph)} | ${cell(s.postGraphile)} | ${s.ratio.toFixed(2)}× |${BASELINE ? ` ${cell(s.baseline)} | ${(s.ratioToBaseline ?? 0).toFixed(2)}× |` : ''} ${cell(s.bareYoga)} | ${s.ratioToBareYoga === null ? '—' : `${s.ratioToBareYoga.toFixed(2)}×`} |`,
    )
    .join(
      '\n',
    )}\n\nCPU ms per dashboard (${CPU_REQUESTS} sequential, median of ${ROUNDS} rounds): main thread, busiest other thread (agent-graph: the database worker), the rest (V8 helpers, libuv)\n\n| side | process | main | busiest other | rest | process total | side total |\n| --- | --- | --- | --- | --- | --- | --- |\n${Object.entries(
    cpuSummary,
  )
    .flatMap(([server, { perProcess, total }]) =>
      Object.entries(perProcess).map(
        ([label, s], i) =>
          `| ${i === 0 ? server : ''} | ${label} | ${ms(s.main)} | ${ms(s.busiestOther)} | ${ms(s.rest)} | ${ms(s.total)} | ${i === 0 ? ms(total) : ''} |`,
      ),
    )
    .join('\n')}\n`,
);
if (SHAPES_MODE) {
  const rps = (server: Server, shape: string, connections: number) =>
    of(server, shape, connections)?.rps ?? 0;
  const cpuOf = (server: Server, shape: string) => median(shapeCpu.get(`${server} ${shape}`) ?? []);
  /** `this / that` and their ratio, for req/s at 1 and 32 connections and CPU per request. */
  const against = (shape: string, that: Server) => {
    const cells = [1, 32].map((c) => {
      const ours = rps('agent-graph', shape, c);
      const theirs = rps(that, shape, c);
      return `${ours.toFixed(0)} / ${theirs.toFixed(0)} | ${(ours / (theirs || 1)).toFixed(2)}×`;
    });
    const ours = cpuOf('agent-graph', shape);
    const theirs = cpuOf(that, shape);
    return `| ${shape} | ${cells.join(' | ')} | ${ms(ours)} / ${ms(theirs)} | ${(ours / (theirs || 1)).toFixed(2)}× |`;
  };
  process.stdout.write(
    `\n| shape | 1 conn: agent-graph / PostGraphile req/s | ratio | 32 conns: agent-graph / PostGraphile req/s | ratio | CPU ms per request: agent-graph / PostGraphile (+ PGlite) | ratio |\n| --- | --- | --- | --- | --- | --- | --- |\n${SHAPE_NAMES.map(
      (shape) => against(shape, 'PostGraphile'),
    ).join('\n')}\n`,
  );
  if (BASELINE) {
    process.stdout.write(
      `\nAgainst the baseline (${BASELINE}), same rounds:\n\n| shape | 1 conn: agent-graph / baseline req/s | ratio | 32 conns: agent-graph / baseline req/s | ratio | CPU ms per request: agent-graph / baseline | ratio |\n| --- | --- | --- | --- | --- | --- | --- |\n${SHAPE_NAMES.map((shape) => against(shape, 'baseline')).join('\n')}\n`,
    );
  }
}
await writeFile(
  new URL(SHAPES_MODE ? './results-anchor-shapes.json' : './results-anchor.json', import.meta.url),
  `${JSON.stringify({ date: new Date().toISOString(), node: process.version, engine: ENGINE, rounds: ROUNDS, durationSeconds: DURATION_S, load, summary, cpu: cpuSummary, shapeCpu: Object.fromEntries(shapeCpu), runs: Object.fromEntries(measured) }, null, 2)}\n`,
);
