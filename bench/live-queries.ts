/**
 * The live-query scenario of `npm run bench:live -- --live-queries 1000`: N live dashboards
 * (one team's page, `@live`) over graphql-ws on one server process, half asking for patches,
 * then runs of that team changing state. Reports, per change, the delay from the commit to
 * each dashboard's new answer (p50, p99, max), the statements per change with one dashboard
 * and with N (the same viewer scope: one shared execution), and the bytes of an update with
 * and without patches, and this process's CPU time per change. The server runs in this
 * process (the bench writes the changes into its embedded database); the dashboards run in a
 * child process (bench/live-query-clients.ts), so that the delays are the server's and not
 * the clients' own work on a shared event loop.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { setRunState, startRun } from '../src/db/embedded/simulator.js';
import { createServer } from '../src/server.js';
import { ClientProcess } from './client-process.js';

const TEAM = 'REPORT_SUMMARY_AGENT_TEAM';
const DASHBOARD = `query Dashboard @live {
  team(name: "${TEAM}") {
    name
    stats { runCount successRate durationP50Ms humanWaitAvgMs }
    waitingForHuman { execId startDate waitingFor { question toolName } }
    runs(first: 50) { nodes { execId state startDate endDate durationMs
      tasks { taskOrder taskName agentName state startDate endDate toolCalls { toolName startDate endDate } } } }
  }
}`;

export interface LiveQueryRow {
  readonly liveQueries: number;
  readonly pollIntervalMs: number;
  readonly changes: number;
  readonly deliveries: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** From the poll cycle that saw the change (its message reaching this process) to the answer. */
  readonly afterCycleP99Ms: number;
  /** This process's CPU time (user + system) from each change to its last receipt. */
  readonly serverCpuMsPerChange: number;
  readonly statementsPerChangeOne: number;
  readonly statementsPerChangeAll: number;
  readonly wholeBytesPerUpdate: number;
  readonly patchBytesPerUpdate: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => performance.timeOrigin + performance.now();
const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

export async function runLiveQueries(count: number, pollIntervalMs: number): Promise<LiveQueryRow> {
  const config = loadConfig({
    PORT: '0',
    SIMULATE: 'false',
    POLL_INTERVAL_MS: String(pollIntervalMs),
    MAX_LIVE_QUERIES_PER_VIEWER: String(count + 1),
    MAX_LIVE_QUERIES: String(count + 1),
  });
  const server = await createServer(config, pino({ level: 'warn' }));
  const url = (await server.start()).replace(/^http/, 'ws');
  const pg = server.database.embedded?.pg;
  if (!pg) throw new Error('the live-query scenario needs the embedded database');
  const runs: string[] = [];
  for (let i = 0; i < 4; i++) {
    const execId = randomUUID().replaceAll('-', '').toUpperCase();
    await startRun(pg, { owner: 'APP_USER', teamName: TEAM, execId });
    runs.push(execId);
  }
  const seenAt = new Map<string, number>();
  const stopObserving = server.live.observeCycles((message) => {
    for (const { run } of message.transitions) seenAt.set(`${run.execId} ${run.state}`, now());
  });
  const afterCycle: number[] = [];
  let cpuMicros = 0;
  const statementsPerChange = async (
    clients: ClientProcess,
    all: boolean,
    changes: [string, string][],
  ) => {
    const delays: number[] = [];
    let statements = 0;
    for (const [execId, state] of changes) {
      await sleep(pollIntervalMs * 1.5);
      clients.send({ watch: [execId, state] });
      await clients.answer(10_000);
      const before = await server.metrics.statementCount();
      const polls = await pollCount();
      const cpu = process.cpuUsage();
      const at = now();
      await setRunState(pg, execId, state as never);
      const { receipts } = await clients.answer<{ receipts: number[] }>(
        pollIntervalMs * 3 + 60_000,
      );
      if (all) {
        const used = process.cpuUsage(cpu);
        cpuMicros += used.user + used.system;
      }
      const cycle = seenAt.get(`${execId} ${state}`) ?? at;
      for (const receipt of receipts) {
        delays.push(receipt - at);
        if (all) afterCycle.push(receipt - cycle);
      }
      // Past the poll statements themselves: what the change cost the live queries.
      statements +=
        (await server.metrics.statementCount()) - before - ((await pollCount()) - polls);
    }
    return { delays, statements: statements / changes.length };
  };
  const pollCount = async () =>
    (await server.metrics.registry.getSingleMetric('agentgraph_db_statements_total')?.get())?.values
      .filter((v) => v.labels.statement === 'teamRuns.live')
      .reduce((sum, v) => sum + v.value, 0) ?? 0;

  const clients = ClientProcess.start('bench/live-query-clients.ts', [`${url}/graphql`, DASHBOARD]);
  try {
    clients.send({ open: 1 });
    await clients.answer(60_000);
    const one = await statementsPerChange(clients, false, [
      [runs[0] as string, 'WAITING_FOR_HUMAN'],
      [runs[0] as string, 'RUNNING'],
    ]);
    clients.send({ open: count });
    await clients.answer(count * 100 + 60_000);
    const all = await statementsPerChange(clients, true, [
      [runs[1] as string, 'WAITING_FOR_HUMAN'],
      [runs[2] as string, 'WAITING_FOR_HUMAN'],
      [runs[1] as string, 'RUNNING'],
      [runs[3] as string, 'WAITING_FOR_HUMAN'],
    ]);
    clients.send({ bytes: true });
    const bytes = await clients.answer<{ whole: number; patched: number }>(10_000);
    const delays = all.delays.sort((a, b) => a - b);
    return {
      liveQueries: count,
      pollIntervalMs,
      changes: 4,
      deliveries: delays.length,
      p50Ms: percentile(delays, 50),
      p99Ms: percentile(delays, 99),
      maxMs: delays.at(-1) ?? Number.NaN,
      afterCycleP99Ms: percentile(
        afterCycle.sort((a, b) => a - b),
        99,
      ),
      serverCpuMsPerChange: cpuMicros / 1000 / 4,
      statementsPerChangeOne: one.statements,
      statementsPerChangeAll: all.statements,
      wholeBytesPerUpdate: bytes.whole,
      patchBytesPerUpdate: bytes.patched,
    };
  } finally {
    stopObserving();
    await clients.close();
    await server.stop();
  }
}
