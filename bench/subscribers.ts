/**
 * The subscribers scenario of `npm run bench`: N idle graphql-ws subscribers on one server
 * process, then bursts of state changes. Measures the delay from each committed change to
 * its receipt at every subscriber, the poll statements per cycle, and the server's RSS per
 * subscriber.
 *
 * The server runs in this process, so that the bench can write the changes into its embedded
 * database, with no load generator in it; the subscribers run in a child process
 * (bench/subscriber-clients.ts), so that the server's RSS holds none of them. Both stamp
 * times with the same wall clock.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { GraphQLSchema } from 'graphql';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { setRunState, startRun } from '../src/db/embedded/simulator.js';
import { schema } from '../src/schema/index.js';
import { type AgentGraphServer, createServer } from '../src/server.js';
import { ClientProcess } from './client-process.js';

const TEAM = 'REPORT_SUMMARY_AGENT_TEAM';
const BURST = 20;

export interface SubscriberRow {
  /** Over every server process. */
  readonly subscribers: number;
  /** Server processes: 2 behind Redis, each with half the subscribers. */
  readonly processes: number;
  /** How many differently written forms of the subscription the subscribers send. */
  readonly forms: number;
  readonly pollIntervalMs: number;
  /** (subscriber, changed run) pairs received, over all bursts. */
  readonly deliveries: number;
  readonly medianMs: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** teamRuns.live statements per good poll cycle while the bursts were delivered. */
  readonly pollStatementsPerCycle: number;
  /** Every statement per good poll cycle meanwhile: more than the poll means per-subscriber work. */
  readonly statementsPerCycle: number;
  readonly rssMiB: number;
  readonly rssKiBPerSubscriber: number;
  /** The JavaScript heap's share of it (after a collection): RSS also holds freed pages. */
  readonly heapKiBPerSubscriber: number;
  /** Mean time (this process's) to fan one cycle message out to its subscriptions and send. */
  readonly fanOutMs: number;
  /** fanOutMs per subscriber of this process: one event's cost for one subscriber. */
  readonly fanOutUsPerSubscriber: number;
  /**
   * This process's CPU time (user + system) from each burst's first change to its last
   * receipt, per fanned-out message and subscriber: unlike fanOutMs, it does not grow with
   * time spent waiting for a busy CPU.
   */
  readonly cpuUsPerSubscriberEvent: number;
  /** The same CPU time per fanned-out message: what one event costs this process. */
  readonly cpuMsPerEvent: number;
  /** Executions of the subscription's selection per fanned-out message, over all subscribers. */
  readonly executionsPerEvent: number;
}

/** The subscriber rows as a Markdown table, as `npm run bench` and `npm run bench:live` print them. */
export function subscriberTable(rows: readonly SubscriberRow[]): string {
  const header = [
    'subscribers',
    'processes',
    'forms',
    'interval',
    'deliveries',
    'p50 ms',
    'p99 ms',
    'max ms',
    'polls/cycle',
    'stmts/cycle',
    'RSS MiB',
    'KiB/subscriber',
    'heap KiB/subscriber',
    'fan-out ms',
    'µs/subscriber',
    'CPU µs/subscriber/event',
    'CPU ms/event',
    'executions/event',
  ];
  const cells = (r: SubscriberRow) => [
    String(r.subscribers),
    String(r.processes),
    String(r.forms),
    `${r.pollIntervalMs} ms`,
    String(r.deliveries),
    r.medianMs.toFixed(0),
    r.p99Ms.toFixed(0),
    r.maxMs.toFixed(0),
    r.pollStatementsPerCycle.toFixed(2),
    r.statementsPerCycle.toFixed(2),
    r.rssMiB.toFixed(0),
    r.rssKiBPerSubscriber.toFixed(1),
    r.heapKiBPerSubscriber.toFixed(1),
    r.fanOutMs.toFixed(0),
    r.fanOutUsPerSubscriber.toFixed(1),
    r.cpuUsPerSubscriberEvent.toFixed(1),
    r.cpuMsPerEvent.toFixed(0),
    r.executionsPerEvent.toFixed(2),
  ];
  const line = (row: string[]) => `| ${row.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map((r) => line(cells(r)))].join(
    '\n',
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => performance.timeOrigin + performance.now();
const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

// Collected before each RSS reading, so that garbage left by the previous step is not
// counted as the subscribers' memory.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The subscriber process (bench/subscriber-clients.ts) for the server at `url`. */
const startClients = (url: string, forms: number) =>
  ClientProcess.start('bench/subscriber-clients.ts', [
    `${url.replace(/^http/, 'ws')}/graphql`,
    TEAM,
    String(forms),
  ]);

/** The second server process of the two-process case. */
class Peer {
  private constructor(
    private readonly child: ChildProcessByStdio<Writable, Readable, null>,
    readonly url: string,
  ) {}

  static async start(env: NodeJS.ProcessEnv): Promise<Peer> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/live-peer.ts'], {
      cwd: new URL('..', import.meta.url),
      env,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const first = await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next();
    if (first.done) throw new Error('the peer server ended before listening');
    return new Peer(child, first.value);
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end();
    await exited;
  }
}

/** Sums a metric's samples whose labels include `labels`. */
async function sample(server: AgentGraphServer, name: string, labels: Record<string, string>) {
  const metric = (await server.metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values ?? [])
    .filter((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value))
    .reduce((sum, v) => sum + v.value, 0);
}

async function fanOutTotals(server: AgentGraphServer) {
  const values = (await server.metrics.liveFanOutDuration.get()).values;
  const total = (name: string) => values.find((v) => v.metricName === name)?.value ?? 0;
  return {
    sum: total('agentgraph_live_fanout_seconds_sum'),
    count: total('agentgraph_live_fanout_seconds_count'),
  };
}

const goodCycles = async (server: AgentGraphServer) =>
  (await server.metrics.pollCycles.get()).values.find((v) => v.labels.outcome === 'ok')?.value ?? 0;

/** Resolves just after a good poll cycle has finished. */
async function cycleEnd(server: AgentGraphServer): Promise<void> {
  const cycles = await goodCycles(server);
  while ((await goodCycles(server)) === cycles) await sleep(2);
}

type Pg = NonNullable<AgentGraphServer['database']['embedded']>['pg'];

/**
 * Moves `runs` to `state` at `phase` (0–1) of the poll interval after a cycle ends, and
 * resolves to each (subscriber, run) delay in milliseconds and to this process's CPU time
 * from the first change to the last receipt (the writes, polls, fan-outs and keep-alives; not
 * the bench's own bookkeeping of receipts).
 */
async function burst(
  server: AgentGraphServer,
  pg: Pg,
  clients: readonly ClientProcess[],
  runs: readonly string[],
  state: 'WAITING_FOR_HUMAN' | 'RUNNING',
  phase: number,
): Promise<{ delays: number[]; cpu: NodeJS.CpuUsage }> {
  const { pollIntervalMs } = server.config.live;
  for (const c of clients) c.send({ watch: runs, present: state === 'WAITING_FOR_HUMAN' });
  for (const c of clients) await c.answer(10_000);
  await cycleEnd(server);
  await sleep(phase * pollIntervalMs);
  const changedAt = new Map<string, number>();
  const cpuBefore = process.cpuUsage();
  for (const execId of runs) {
    await setRunState(pg, execId, state);
    changedAt.set(execId, now());
  }
  const answers: string[] = [];
  for (const c of clients) answers.push(await c.line(pollIntervalMs * 3 + 30_000));
  const cpu = process.cpuUsage(cpuBefore);
  const delays: number[] = [];
  for (const answer of answers) {
    const { receipts } = JSON.parse(answer) as { receipts: Record<string, number[]> };
    for (const [execId, times] of Object.entries(receipts)) {
      for (const at of times) delays.push(at - (changedAt.get(execId) as number));
    }
  }
  return { delays, cpu };
}

/**
 * Changes land at four moments of the cycle. The first, with the heavier message (the waiting
 * set holds the burst), lands just after a cycle has read the database: the worst case, a
 * whole interval before the next cycle sees it.
 */
const BURSTS = [
  { state: 'WAITING_FOR_HUMAN', phase: 0.02 },
  { state: 'RUNNING', phase: 0.25 },
  { state: 'WAITING_FOR_HUMAN', phase: 0.5 },
  { state: 'RUNNING', phase: 0.75 },
] as const;

/**
 * Counts executions of the subscription's selection: graphql-js calls the root field's
 * resolver once per execution, so wrapping it on the schema object counts them with nothing
 * in src/ knowing about the bench.
 */
function countExecutions(schema: GraphQLSchema, field: string): () => number {
  const definition = schema.getSubscriptionType()?.getFields()[field];
  const resolve = definition?.resolve;
  if (!definition || !resolve) throw new Error(`no resolver for Subscription.${field}`);
  let executions = 0;
  definition.resolve = (...args) => {
    executions++;
    return resolve(...args);
  };
  return () => executions;
}

export interface SubscribersOptions {
  /** A second server process (bench/live-peer.ts) behind this Redis. */
  readonly redis?: { readonly url: string; readonly prefix: string };
  /** Subscribers spread over this many forms of the subscription (bench/subscriber-clients.ts). */
  readonly forms?: number;
  /**
   * A directory to write heap snapshots to, one with the first subscriber (base) and one per
   * count: comparing two by constructor shows what each subscriber holds.
   */
  readonly heapSnapshots?: string;
}

/**
 * With `redis`, a second server process (bench/live-peer.ts) shares this one's cycle messages
 * through Redis, and each count is opened on each of the two: the rows' subscribers are the
 * total, RSS is this process's.
 */
export async function runSubscribers(
  counts: readonly number[],
  pollIntervalMs: number,
  log: (line: string) => void,
  { redis, forms = 1, heapSnapshots }: SubscribersOptions = {},
): Promise<SubscriberRow[]> {
  const executions = countExecutions(schema, 'teamsWaitingForHuman');
  const env = {
    PORT: '0',
    SIMULATE: 'false',
    POLL_INTERVAL_MS: String(pollIntervalMs),
    // Every bench client is the one anonymous administrator.
    MAX_SUBSCRIPTIONS_PER_VIEWER: String(Math.max(...counts)),
    ...(redis ? { REDIS_URL: redis.url, REDIS_PREFIX: redis.prefix } : {}),
  };
  const config = loadConfig(env);
  const server = await createServer(config, pino({ level: 'warn' }));
  const url = await server.start();
  const pg = server.database.embedded?.pg;
  if (!pg) throw new Error('the subscribers scenario needs the embedded database');
  const runs: string[] = [];
  for (let i = 0; i < BURST; i++) {
    const execId = randomUUID().replaceAll('-', '').toUpperCase();
    await startRun(pg, { owner: 'APP_USER', teamName: TEAM, execId });
    runs.push(execId);
  }
  const clients = [startClients(url, forms)];
  /**
   * RSS once it stops falling: some buffers (the database snapshot read at start-up) are
   * released only a collection or two after they became garbage.
   */
  const settledRss = async () => {
    await cycleEnd(server);
    let last = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 10; i++) {
      gc();
      await sleep(300);
      const rss = process.memoryUsage.rss();
      if (Math.abs(last - rss) < 2 ** 20) break;
      last = rss;
    }
    return last;
  };
  const rows: SubscriberRow[] = [];
  let peer: Peer | undefined;
  try {
    (clients[0] as ClientProcess).send({ open: 1 });
    await (clients[0] as ClientProcess).answer(30_000);
    if (redis) {
      // Started once this process polls (its first subscriber holds the lock), so that the
      // peer only relays: its own embedded database never sees the bench's changes.
      peer = await Peer.start({ ...process.env, ...env });
      clients.push(startClients(peer.url, forms));
      (clients[1] as ClientProcess).send({ open: 1 });
      await (clients[1] as ClientProcess).answer(30_000);
    }
    const baseRss = await settledRss();
    const baseHeap = process.memoryUsage().heapUsed;
    const snapshot = (name: string) => {
      if (heapSnapshots) log(`  heap snapshot ${writeHeapSnapshot(join(heapSnapshots, name))}\n`);
    };
    snapshot('base.heapsnapshot');
    for (const count of counts) {
      for (const c of clients) c.send({ open: count });
      for (const c of clients) await c.answer(240_000);
      const subscribers = count * clients.length;
      const rss = await settledRss();
      const heap = process.memoryUsage().heapUsed;
      snapshot(`${subscribers}.heapsnapshot`);

      const polls = () =>
        sample(server, 'agentgraph_db_statements_total', { statement: 'teamRuns.live' });
      const before = {
        statements: await server.metrics.statementCount(),
        polls: await polls(),
        cycles: await goodCycles(server),
      };
      const delays: number[] = [];
      const fanOut = await fanOutTotals(server);
      const executionsBefore = executions();
      const cpuUsed = { user: 0, system: 0 };
      for (const { state, phase } of BURSTS) {
        const { delays: burstDelays, cpu } = await burst(server, pg, clients, runs, state, phase);
        // One push per delay: a spread of 200,000 arguments overflows the stack.
        for (const delay of burstDelays) delays.push(delay);
        cpuUsed.user += cpu.user;
        cpuUsed.system += cpu.system;
      }
      const fanOutAfter = await fanOutTotals(server);
      const fanOuts = Math.max(1, fanOutAfter.count - fanOut.count);
      const executed = executions() - executionsBefore;
      const fanOutMs = (1000 * (fanOutAfter.sum - fanOut.sum)) / fanOuts;
      delays.sort((a, b) => a - b);
      const cycles = (await goodCycles(server)) - before.cycles;
      const statements = (await server.metrics.statementCount()) - before.statements;

      rows.push({
        subscribers,
        processes: clients.length,
        forms,
        pollIntervalMs,
        deliveries: delays.length,
        medianMs: percentile(delays, 50),
        p99Ms: percentile(delays, 99),
        maxMs: delays.at(-1) ?? Number.NaN,
        pollStatementsPerCycle: ((await polls()) - before.polls) / cycles,
        statementsPerCycle: statements / cycles,
        rssMiB: rss / 2 ** 20,
        rssKiBPerSubscriber: (rss - baseRss) / 1024 / (count - 1),
        heapKiBPerSubscriber: (heap - baseHeap) / 1024 / (count - 1),
        fanOutMs,
        fanOutUsPerSubscriber: (1000 * fanOutMs) / count,
        cpuUsPerSubscriberEvent: (cpuUsed.user + cpuUsed.system) / fanOuts / count,
        cpuMsPerEvent: (cpuUsed.user + cpuUsed.system) / 1000 / fanOuts,
        executionsPerEvent: executed / fanOuts,
      });
      const perEvent = (us: number) => (us / fanOuts / count).toFixed(1);
      log(
        `  subscribers (${subscribers}): p99 delivery ${percentile(delays, 99).toFixed(0)} ms; ` +
          `CPU µs per subscriber and event: user ${perEvent(cpuUsed.user)}, system ${perEvent(cpuUsed.system)}\n`,
      );
    }
  } finally {
    for (const c of clients) await c.close();
    await peer?.stop();
    await server.stop();
  }
  return rows;
}
