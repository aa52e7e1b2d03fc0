import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import type { EmbeddedPg } from '../../src/db/embedded/database.js';
import type { AgentGraphServer } from '../../src/server.js';
import { WAIT_MS } from '../support/wait.js';

export interface GqlEvent<T> {
  readonly data?: T | null;
  readonly errors?: { message: string; extensions?: { code?: string } }[];
}

/** Lets a test helper wait for its next event without polling, or for a deadline. */
export class Wakeup {
  private readonly waiters: (() => void)[] = [];

  /** Resolves at the next `wake()`, or after `ms` if none comes. */
  next(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}

/** The events of one subscription as they arrive, over either transport. */
export class Recorder<T> {
  readonly events: (GqlEvent<T> & { at: number })[] = [];
  readonly errors: unknown[] = [];
  completed = false;
  private readonly wakeup = new Wakeup();

  constructor(readonly close: () => void) {}

  push(event: GqlEvent<T>): void {
    this.events.push({ ...event, at: Date.now() });
    this.wakeup.wake();
  }

  fail(error: unknown): void {
    this.errors.push(error);
    this.wakeup.wake();
  }

  complete(): void {
    this.completed = true;
    this.wakeup.wake();
  }

  get data(): T[] {
    return this.events.flatMap((event) => (event.data ? [event.data] : []));
  }

  /** Resolves once `count` events have arrived. */
  async take(count: number, timeoutMs = WAIT_MS): Promise<T[]> {
    await this.until(() => this.events.length >= count, timeoutMs, `${count} events`);
    return this.data.slice(0, count);
  }

  async until(predicate: () => boolean, timeoutMs = WAIT_MS, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `timed out waiting for ${what}; got ${JSON.stringify(this.events)} ${String(this.errors)}`,
        );
      }
      await this.wakeup.next(left);
    }
  }
}

export function wsUrl(httpUrl: string): string {
  return `${httpUrl.replace(/^http/, 'ws')}/graphql`;
}

export function wsClient(httpUrl: string): Client {
  return createClient({ url: wsUrl(httpUrl), webSocketImpl: WebSocket, retryAttempts: 0 });
}

export function subscribeWs<T>(
  client: Client,
  query: string,
  variables: Record<string, unknown> = {},
): Recorder<T> {
  let unsubscribe = () => {};
  const recorder = new Recorder<T>(() => unsubscribe());
  unsubscribe = client.subscribe<T>(
    { query, variables },
    {
      next: (value) => recorder.push(value as GqlEvent<T>),
      error: (error) => recorder.fail(error),
      complete: () => recorder.complete(),
    },
  );
  return recorder;
}

/** A GraphQL-over-SSE subscription through fetch; resolves once the response has started. */
export async function subscribeSse<T>(
  httpUrl: string,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<Recorder<T>> {
  const abort = new AbortController();
  const recorder = new Recorder<T>(() => abort.abort());
  const response = await fetch(`${httpUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
    throw new Error(`not an event stream: ${response.status} ${await response.text()}`);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
          const lines = block.split('\n');
          const event = lines
            .find((l) => l.startsWith('event:'))
            ?.slice(6)
            .trim();
          const data = lines
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('\n');
          if (event === 'next') recorder.push(JSON.parse(data) as GqlEvent<T>);
          if (event === 'complete') recorder.complete();
        }
      }
      recorder.complete();
    } catch (error) {
      if (!abort.signal.aborted) recorder.fail(error);
    }
  })();
  return recorder;
}

export async function until(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = WAIT_MS,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function metric(
  server: AgentGraphServer,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  // The one metric, not the whole registry: collecting every metric (process metrics, the
  // statement histograms) takes long enough for a 50 ms poll cycle to start meanwhile.
  const found = await server.metrics.registry.getSingleMetric(name)?.get();
  return (found?.values ?? [])
    .filter((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value))
    .reduce((sum, v) => sum + v.value, 0);
}

export const activeSubscriptions = (server: AgentGraphServer) =>
  metric(server, 'agentgraph_active_subscriptions');

export const goodCycles = (server: AgentGraphServer) =>
  metric(server, 'agentgraph_poll_cycles_total', { outcome: 'ok' });

const POLL_STATEMENT = 'teamRuns.live';

export const pollStatements = (server: AgentGraphServer) =>
  metric(server, 'agentgraph_db_statements_total', { statement: POLL_STATEMENT });

/**
 * Statements issued so far other than the poll's, from one read of the counter: a poll cycle
 * (every 150 ms or less here) may run between two reads, so a total read apart from the
 * poll's count would take a poll statement for another one.
 */
export async function otherStatements(server: AgentGraphServer): Promise<number> {
  const found = await server.metrics.registry
    .getSingleMetric('agentgraph_db_statements_total')
    ?.get();
  return (found?.values ?? [])
    .filter((v) => v.labels.statement !== POLL_STATEMENT)
    .reduce((sum, v) => sum + v.value, 0);
}

/**
 * Waits until the server has finished `count` more good poll cycles: what a test waits on
 * instead of a sleep to show that nothing else arrives (a change is published by the cycle
 * that sees it, and delivered long before two more cycles have passed).
 */
export async function pollCycles(server: AgentGraphServer, count: number): Promise<void> {
  const start = await goodCycles(server);
  await until(
    async () => (await goodCycles(server)) >= start + count,
    WAIT_MS,
    `${count} poll cycles`,
  );
}

/**
 * Waits until the server counts `subscriptions` open subscriptions and has then finished a
 * poll cycle, so that any change made from now on is reported.
 */
export async function settled(server: AgentGraphServer, subscriptions: number): Promise<void> {
  await until(
    async () => (await activeSubscriptions(server)) === subscriptions,
    WAIT_MS,
    `${subscriptions} subscriptions`,
  );
  const cycles = await goodCycles(server);
  await until(async () => (await goodCycles(server)) > cycles, WAIT_MS, 'a poll cycle');
}

/** As settled, for pages that watch through live queries (agentgraph_live_queries). */
export async function liveQueriesSettled(
  server: AgentGraphServer,
  liveQueries: number,
): Promise<void> {
  await until(
    async () => (await metric(server, 'agentgraph_live_queries')) === liveQueries,
    WAIT_MS,
    `${liveQueries} live queries`,
  );
  const cycles = await goodCycles(server);
  await until(async () => (await goodCycles(server)) > cycles, WAIT_MS, 'a poll cycle');
}

export function embeddedPg(server: AgentGraphServer): EmbeddedPg {
  const pg = server.database.embedded?.pg;
  if (!pg) throw new Error('the test server is not embedded');
  return pg;
}

/** Runs of a team in a state, oldest TEAM_EXEC_ID first, straight from the embedded tables. */
export async function runsIn(
  pg: EmbeddedPg,
  state: string,
  teamName?: string,
  owner?: string,
): Promise<{ execId: string; teamName: string; owner: string }[]> {
  const { rows } = await pg.query<{ team_exec_id: string; team_name: string; team_owner: string }>(
    `SELECT team_exec_id, team_name, team_owner FROM dba_ai_agent_team_history
     WHERE state = $1 AND ($2::text IS NULL OR team_name = $2) AND ($3::text IS NULL OR team_owner = $3)
     ORDER BY team_exec_id`,
    [state, teamName ?? null, owner ?? null],
  );
  return rows.map((row) => ({
    execId: row.team_exec_id,
    teamName: row.team_name,
    owner: row.team_owner,
  }));
}

/** The id of a RUNNING run of `owner`, asked of the server at `url` with an admin's token. */
export async function runningRunOf(
  url: string,
  adminToken: string,
  owner: string,
): Promise<string> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify({
      query:
        'query($o: String) { teamRuns(first: 1, filter: { owner: $o, states: [RUNNING] }) { nodes { execId } } }',
      variables: { o: owner },
    }),
  });
  const body = (await response.json()) as { data: { teamRuns: { nodes: { execId: string }[] } } };
  const execId = body.data.teamRuns.nodes[0]?.execId;
  if (!execId) throw new Error(`no running run of ${owner}`);
  return execId;
}
