/**
 * The live-query scenario of `npm run bench:live -- --live-queries 1000`: N live dashboards
 * (one team's page, `@live`) over graphql-ws on one server process, half asking for patches,
 * then runs of that team changing state. Reports, per change, the delay from the commit to
 * each dashboard's new answer (p50, p99, max), the statements per change with one dashboard
 * and with N (the same viewer scope: one shared execution), and the bytes of an update with
 * and without patches. The dashboards' sockets live in this process (one event loop with the
 * server: the delays include the clients' own work).
 */
import { randomUUID } from 'node:crypto';
import { applyJSONDiffPatch } from '@n1ru4l/graphql-live-query-patch-jsondiffpatch';
import { type Client, createClient } from 'graphql-ws';
import pino from 'pino';
import WebSocket from 'ws';
import { loadConfig } from '../src/config.js';
import { setRunState, startRun } from '../src/db/embedded/simulator.js';
import { createServer } from '../src/server.js';

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
  readonly statementsPerChangeOne: number;
  readonly statementsPerChangeAll: number;
  readonly wholeBytesPerUpdate: number;
  readonly patchBytesPerUpdate: number;
}

interface Dashboard {
  data: { team: { runs: { nodes: { execId: string; state: string }[] } } } | undefined;
  bytes: number[];
  seen: (execId: string, state: string) => boolean;
}

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

function open(socket: Client, patches: boolean, onAnswer: () => void): Dashboard {
  const dashboard: Dashboard = {
    data: undefined,
    bytes: [],
    seen: (execId, state) =>
      Boolean(
        dashboard.data?.team.runs.nodes.some((run) => run.execId === execId && run.state === state),
      ),
  };
  socket.subscribe(
    { query: DASHBOARD, ...(patches ? { extensions: { liveQueryPatch: 'jsondiffpatch' } } : {}) },
    {
      next: (value) => {
        const message = value as { data?: never; patch?: never; revision?: number };
        dashboard.bytes.push(JSON.stringify(value).length);
        dashboard.data =
          patches && (message.revision ?? 1) > 1
            ? (applyJSONDiffPatch(dashboard.data as never, message.patch as never) as never)
            : (message.data as never);
        onAnswer();
      },
      error: (error) => console.error(error),
      complete: () => {},
    },
  );
  return dashboard;
}

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
  const sockets: Client[] = [];
  let answers = 0;
  const counted = () => {
    answers++;
  };
  const seenAt = new Map<string, number>();
  const stopObserving = server.live.observeCycles((message) => {
    for (const { run } of message.transitions) seenAt.set(`${run.execId} ${run.state}`, now());
  });
  const afterCycle: number[] = [];
  const statementsPerChange = async (dashboards: Dashboard[], changes: [string, string][]) => {
    const delays: number[] = [];
    let statements = 0;
    for (const [execId, state] of changes) {
      await sleep(pollIntervalMs * 1.5);
      const before = await server.metrics.statementCount();
      const polls = await pollCount();
      const at = now();
      await setRunState(pg, execId, state as never);
      const waiting = new Set(dashboards);
      while (waiting.size > 0) {
        for (const dashboard of waiting) {
          if (dashboard.seen(execId, state)) {
            delays.push(now() - at);
            if (dashboards.length > 1) {
              afterCycle.push(now() - (seenAt.get(`${execId} ${state}`) ?? at));
            }
            waiting.delete(dashboard);
          }
        }
        if (waiting.size > 0) await sleep(2);
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

  try {
    const first = createClient({
      url: `${url}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
    });
    sockets.push(first);
    const alone = open(first, false, counted);
    while (answers < 1) await sleep(5);
    const one = await statementsPerChange(
      [alone],
      [
        [runs[0] as string, 'WAITING_FOR_HUMAN'],
        [runs[0] as string, 'RUNNING'],
      ],
    );
    const dashboards: Dashboard[] = [alone];
    for (let i = 1; i < count; i++) {
      const socket = createClient({
        url: `${url}/graphql`,
        webSocketImpl: WebSocket,
        retryAttempts: 0,
      });
      sockets.push(socket);
      dashboards.push(open(socket, i % 2 === 1, counted));
    }
    while (answers < count) await sleep(10);
    const all = await statementsPerChange(dashboards, [
      [runs[1] as string, 'WAITING_FOR_HUMAN'],
      [runs[2] as string, 'WAITING_FOR_HUMAN'],
      [runs[1] as string, 'RUNNING'],
      [runs[3] as string, 'WAITING_FOR_HUMAN'],
    ]);
    const updates = (patched: boolean) =>
      dashboards
        .filter((_, i) => i > 0 && i % 2 === (patched ? 1 : 0))
        .flatMap((d) => d.bytes.slice(1));
    const mean = (values: number[]) =>
      values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
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
      statementsPerChangeOne: one.statements,
      statementsPerChangeAll: all.statements,
      wholeBytesPerUpdate: mean(updates(false)),
      patchBytesPerUpdate: mean(updates(true)),
    };
  } finally {
    stopObserving();
    await Promise.all(sockets.map((socket) => socket.dispose()));
    await server.stop();
  }
}
