/**
 * `npm run bench:start -- [--rounds 3] [--baseline DIR]`: how long `npm start` (scripts/run.mjs
 * src/main.ts) takes to be ready from the cached snapshot, and where the time goes: the first
 * log line, the database thread's start, reading the snapshot, PGlite.create, the server's
 * modules, and /ready answering; with the process's CPU at that moment per thread, from /proc
 * (Linux), steadier than wall time on a shared machine. The phases are the start-up lines'
 * own fields (src/main.ts, src/db/embedded/database.ts). With `--baseline <checkout>`, that
 * checkout is started in the same rounds, alternating, for a change's effect; each checkout
 * starts once first, unmeasured, to build its JavaScript and seed its snapshot.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseCommand } from '../src/command-line.js';
import { shareOf, threadCpu } from './thread-cpu.js';

const { values: args, fail } = parseCommand({
  name: 'npm run bench:start --',
  about: `Ready from the cached snapshot: npm start (scripts/run.mjs src/main.ts, PORT=0,
SIMULATE=false) until /ready answers, in rounds, with where the time went (first log line,
database thread start, snapshot read, PGlite.create, server modules) and the process's CPU
per thread at that moment. With --baseline, another checkout's start in the same rounds,
alternating.`,
  options: {
    rounds: { type: 'string', default: '3', placeholder: 'n', description: 'starts per checkout' },
    baseline: {
      type: 'string',
      placeholder: 'dir',
      description:
        'another checkout (with its node_modules), started in the same rounds, alternating',
    },
  },
});
const ROUNDS = Number(args.rounds);
if (!(Number.isInteger(ROUNDS) && ROUNDS > 0)) fail('--rounds takes a whole number of at least 1');

/** One start, in ms: wall times from the spawn, phases from the log lines (absent in older checkouts). */
interface Start {
  readonly firstLine: number;
  readonly thread?: number;
  readonly read?: number;
  readonly create?: number;
  readonly snapshot?: number;
  readonly modules?: number;
  readonly database?: number;
  readonly ready: number;
  readonly cpuMain: number;
  readonly cpuThread: number;
  readonly cpuRest: number;
  readonly cpu: number;
  readonly load: number;
}

type LogLine = Record<string, unknown> & { msg?: string };

async function start(cwd: string): Promise<Start> {
  const spawned = performance.now();
  const child = spawn(process.execPath, ['scripts/run.mjs', 'src/main.ts'], {
    cwd,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      SIMULATE: 'false',
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  try {
    let firstLine: number | undefined;
    let snapshot: LogLine | undefined;
    for await (const text of createInterface({ input: child.stdout })) {
      firstLine ??= performance.now() - spawned;
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        continue;
      }
      if (line.msg?.startsWith('first start:')) {
        throw new Error(`${cwd} seeded its database: the snapshot was missing`);
      }
      if (line.msg === 'embedded database loaded from its snapshot') snapshot = line;
      if (typeof line.readyMs !== 'number') continue;
      const base = String(line.url).replace(/\/graphql$/, '');
      const response = await fetch(`${base}/ready`);
      const ready = performance.now() - spawned;
      if (!response.ok) throw new Error(`/ready answered ${response.status}`);
      const pid = child.pid as number;
      const cpu = shareOf(pid, new Map(), threadCpu(pid), 1);
      const number = (value: unknown) => (typeof value === 'number' ? value : undefined);
      return {
        firstLine: firstLine as number,
        thread: number(snapshot?.threadMs),
        read: number(snapshot?.readMs),
        create: number(snapshot?.createMs),
        snapshot: number(snapshot?.ms),
        modules: number(line.modulesMs),
        database: number(line.databaseMs),
        ready,
        cpuMain: cpu.main,
        cpuThread: cpu.busiestOther,
        cpuRest: cpu.rest,
        cpu: cpu.total,
        load: loadavg()[0] as number,
      };
    }
    throw new Error(`${cwd}: the server exited before it was ready`);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

const checkouts: [string, string][] = [['this checkout', resolve('.')]];
if (args.baseline) checkouts.push(['baseline', resolve(args.baseline)]);

for (const [name, cwd] of checkouts) {
  // Builds the checkout's JavaScript copy (scripts/run.mjs) and seeds its snapshot, if needed.
  const child = spawn(process.execPath, ['scripts/run.mjs', 'src/main.ts'], {
    cwd,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', SIMULATE: 'false', LOG_FORMAT: 'json' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  for await (const text of createInterface({ input: child.stdout })) {
    if (text.includes('"readyMs"')) break;
  }
  child.kill('SIGTERM');
  await exited;
  process.stdout.write(`${name} (${cwd}): warmed up\n`);
}

const results = new Map<string, Start[]>(checkouts.map(([name]) => [name, []]));
const COLUMNS: [keyof Start, string][] = [
  ['firstLine', 'first line'],
  ['thread', 'thread'],
  ['read', 'read'],
  ['create', 'create'],
  ['snapshot', 'db open'],
  ['modules', 'modules'],
  ['database', 'db ready'],
  ['ready', 'ready'],
  ['cpuMain', 'cpu main'],
  ['cpuThread', 'cpu thread'],
  ['cpuRest', 'cpu rest'],
  ['cpu', 'cpu'],
  ['load', 'load'],
];
const cell = (key: keyof Start, value: number | undefined) =>
  (value === undefined
    ? '-'
    : key === 'load'
      ? value.toFixed(1)
      : String(Math.round(value))
  ).padStart(11);
process.stdout.write(
  `ms; thread, read, create, db open: the database thread (threadMs, readMs, createMs, ms of its
line); modules: the server's modules; db ready and ready: since the spawn's process started
(ready: /ready answered, from the spawn); cpu: the process's, per thread, at ready\n\n`,
);
process.stdout.write(
  `${'checkout'.padEnd(14)}${COLUMNS.map(([, t]) => t.padStart(11)).join('')}\n`,
);
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? checkouts : [...checkouts].reverse();
  for (const [name, cwd] of order) {
    const measured = await start(cwd);
    results.get(name)?.push(measured);
    process.stdout.write(
      `${name.padEnd(14)}${COLUMNS.map(([key]) => cell(key, measured[key])).join('')}\n`,
    );
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? sorted[middle]
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};
process.stdout.write('\nmedians\n');
for (const [name, starts] of results) {
  const row = COLUMNS.map(([key]) => {
    const values = starts.map((s) => s[key]).filter((v): v is number => v !== undefined);
    return cell(key, values.length > 0 ? median(values) : undefined);
  });
  process.stdout.write(`${name.padEnd(14)}${row.join('')}\n`);
}
