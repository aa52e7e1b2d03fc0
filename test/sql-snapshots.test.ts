/**
 * The exact SQL each of a few operations sends, pinned in test/sql/<operation>.sql (as
 * PostGraphile's own suite pins X.sql beside X.graphql), so that every change of SQL text or
 * statement count shows in a diff. `npm run sql:snapshots` rewrites the files.
 */
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, expect, test } from 'vitest';
import WebSocket from 'ws';
import type { Binds, Driver, Statement } from '../src/db/driver.js';
import { goodCycles, subscribeWs, until, wsUrl } from './live/support.js';
import { startTestServer, type TestServer } from './support/server.js';
import { hs256Tokens } from './support/tokens.js';
import { WAIT_MS } from './support/wait.js';

const SECRET = 'a-test-secret-that-is-long-enough-for-hs256!';
const AUDIENCE = 'agent-graph-sql-snapshots';

const README_QUERY = `{
  agents(first: 5) {
    totalCount
    nodes { name owner createTime description inputs { title type } }
    pageInfo { hasNextPage endCursor }
  }
  agent(name: "ORDER_REQUEST_FLOW") {
    callContract { inputFormat requiredKeys nameMatches }
  }
  execStats(scope: INSTANCE, first: 10, filter: { minTotalTimeMs: 2000 },
            orderBy: { field: TOTAL_TIME, direction: DESC }) {
    totalCount
    nodes { conId totalTimeExecMs totalTimeLlmMs totalTimeToolMs llmTimePct toolTimePct
            llmCallCount toolCallCount inputTokens outputTokens }
  }
  execStatSummary(scope: CLUSTER) {
    executionCount totalTimeAvgMs totalTimeP50Ms totalTimeP95Ms totalTimeP99Ms totalTimeMaxMs
    totals { inputTokens outputTokens llmCallCount }
  }
}`;

const README_CURL = '{ agents(first: 3) { totalCount nodes { name owner } } }';

const README_SUBSCRIPTION = `subscription {
  teamsWaitingForHuman { execId teamName waitingSince run { tasks { taskName state } } }
}`;

const DASHBOARD =
  '{ teams(first: 20) { edges { node { name tools { name } runs(first: 10) { edges { node { state tasks { taskName agent { name } toolCalls { toolName } } } } } } } } }';

/** A keyset cursor as the server writes it: the list's order, then the row's key values. */
const cursor = (values: unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64url');

// After a place later than any run's end (the demo history ends when the database opens), so
// the page has rows and carries its total.
const HISTORY_PAGES = `{
  teamRuns(first: 3, after: "${cursor(['teamRuns:END_DATE:DESC', ['2100-01-01T10:00:00.123Z', '456'], 'X'])}",
           orderBy: { field: END_DATE, direction: DESC }, filter: { states: [SUCCEEDED, FAILED] }) {
    totalCount nodes { execId } pageInfo { hasNextPage endCursor }
  }
  toolCalls(last: 3, before: "${cursor(['toolCalls', null, 'X'])}") { totalCount nodes { invocationId } }
}`;

interface Sent {
  readonly statement: Statement;
  readonly agentDetails: boolean;
}

/** Records what reaches the database driver, then passes it on unchanged. */
function recordStatements(driver: Driver): Sent[] {
  const sent: Sent[] = [];
  const query = driver.query.bind(driver);
  const withDetails = driver.queryWithAgentDetails.bind(driver);
  driver.query = (statement: Statement, binds?: Binds) => {
    sent.push({ statement, agentDetails: false });
    return query(statement, binds);
  };
  driver.queryWithAgentDetails = (statement: Statement, binds?: Binds) => {
    sent.push({ statement, agentDetails: true });
    return withDetails(statement, binds);
  };
  return sent;
}

function snapshot(operation: string, sent: readonly Sent[]): string {
  const lines = [
    ...operation.split('\n').map((line) => `-- ${line}`),
    `-- ${sent.length} statement${sent.length === 1 ? '' : 's'}`,
  ];
  for (const { statement, agentDetails } of sent) {
    lines.push('', `-- ${statement.name}${agentDetails ? ' (with DESCRIBE_AGENT details)' : ''}`);
    lines.push(`${statement.text};`);
  }
  return `${lines.join('\n')}\n`;
}

let t: TestServer;
let sent: Sent[];
const bearer: Record<'admin' | 'analyst', string> = { admin: '', analyst: '' };

const { sign: token } = hs256Tokens(SECRET, { audience: AUDIENCE, issuedAt: true });

beforeAll(async () => {
  t = await startTestServer({
    AUTH_JWT_SECRET: SECRET,
    AUTH_AUDIENCE: AUDIENCE,
    // Cycles a second apart, so that the live-poll test's window, from the end of one cycle to
    // the end of the next, holds one cycle even when a loaded machine sees those ends late (at
    // 50 ms apart, a window seen 50 ms late held two: load 26).
    POLL_INTERVAL_MS: '1000',
  });
  sent = recordStatements(t.server.database.driver);
  bearer.admin = await token({ roles: ['admin'] });
  bearer.analyst = await token({ db_user: 'ANALYST' });
});
afterAll(() => t.stop());

/** The statements `run` sends, in the order they reach the driver. */
async function during(run: () => Promise<unknown>): Promise<Sent[]> {
  sent.length = 0;
  await run();
  return sent.splice(0);
}

test.each([
  ['readme-first-query', README_QUERY, 'admin'],
  ['readme-curl', README_CURL, 'admin'],
  ['dashboard', DASHBOARD, 'admin'],
  ['dashboard-non-admin', DASHBOARD, 'analyst'],
  ['history-pages', HISTORY_PAGES, 'admin'],
] as const)('%s sends the SQL pinned in test/sql/', async (name, query, viewer) => {
  const statements = await during(async () => {
    const { data, errors } = await t.post(query, undefined, {
      authorization: `Bearer ${bearer[viewer]}`,
    });
    expect(errors).toBeUndefined();
    expect(data).toBeTruthy();
  });
  await expect(snapshot(query, statements)).toMatchFileSnapshot(`sql/${name}.sql`);
});

test('one live poll cycle sends the SQL in test/sql/live-poll.sql', async () => {
  const client = createClient({
    url: wsUrl(t.url),
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${bearer.admin}` },
  });
  const subscription = subscribeWs(client, README_SUBSCRIPTION);
  try {
    // The current set arrives first (its fields resolved); after that, between the end of one
    // cycle and the end of the next, exactly one cycle runs and nothing else changes.
    await subscription.take(1);
    const cycles = await goodCycles(t.server);
    await until(async () => (await goodCycles(t.server)) > cycles, WAIT_MS, 'a poll cycle');
    // Cycles do not overlap, but the one under way may have sent its statement just before
    // the recording started: then the window runs to the end of the following cycle.
    const statements = await during(async () => {
      do {
        const next = await goodCycles(t.server);
        await until(async () => (await goodCycles(t.server)) > next, WAIT_MS, 'a poll cycle');
      } while (sent.length === 0);
    });
    await expect(
      snapshot(`${README_SUBSCRIPTION}\n(one poll cycle, with this subscription open)`, statements),
    ).toMatchFileSnapshot('sql/live-poll.sql');
  } finally {
    subscription.close();
    await client.dispose();
  }
});
