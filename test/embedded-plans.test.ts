/**
 * How the embedded database runs the statements of everyday pages (src/db/embedded/database.ts,
 * startSession): each statement as the server sends it, planned as its prepared text is, on
 * the generic plan (plan_cache_mode) with the session's costs. A list below a page reads each
 * parent's rows off the index of their key, as PostGraphile's subqueries do, instead of
 * scanning every row of the table into a hash join; a keyset page's rows come off the index
 * of its order, and its list takes them in that order (src/db/sql/history-plan.ts,
 * keysetRoot).
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Binds, Driver, Statement } from '../src/db/driver.js';
import { numbered } from '../src/db/embedded/database.js';
import { built } from '../src/db/sql/query.js';
import { startTestServer, type TestServer } from './support/server.js';

let t: TestServer;
let sent: Statement[];

/** Records the statements that reach the database driver, then passes them on unchanged. */
function recordStatements(driver: Driver): Statement[] {
  const statements: Statement[] = [];
  const query = driver.query.bind(driver);
  driver.query = (statement: Statement, binds?: Binds) => {
    statements.push(statement);
    return query(statement, binds);
  };
  return statements;
}

beforeAll(async () => {
  // A database of its own, opened as a server opens one (its history moved, then analysed):
  // a shared one, reset between servers (src/db/embedded/reuse.ts), keeps no row counts
  // after its TRUNCATE, and PostgreSQL would plan it on guesses.
  t = await startTestServer({}, { ownDatabase: true });
  sent = recordStatements(t.server.database.driver);
});
afterAll(() => t.stop());

/** The generic plan of each statement `query` sends, as the embedded session makes it. */
async function plansOf(query: string): Promise<string[]> {
  sent.length = 0;
  const { data, errors } = await t.gql(query);
  expect(errors).toBeUndefined();
  expect(data).toBeTruthy();
  const embedded = t.server.database.embedded;
  if (!embedded) throw new Error('the test server runs on the embedded database');
  const plans: string[] = [];
  for (const statement of sent.splice(0)) {
    const { text } = numbered(built(statement));
    // Through the simple protocol: the text's parameters stay unbound, as GENERIC_PLAN wants.
    const [result] = await embedded.pg.exec(`EXPLAIN (GENERIC_PLAN, COSTS OFF) ${text}`);
    plans.push(
      (result?.rows ?? []).map((row) => (row as Record<string, string>)['QUERY PLAN']).join('\n'),
    );
  }
  return plans;
}

test.each([
  [
    'a page of runs, backwards',
    '{ teamRuns(last: 20) { nodes { execId state tasks { taskName state } } } }',
  ],
  [
    'the runs of one state',
    '{ teamRuns(first: 20, filter: { states: [FAILED] }) { nodes { execId tasks { taskName } } } }',
  ],
  ['a page of tool calls', '{ toolCalls(first: 30) { nodes { toolName taskRun { taskName } } } }'],
])("%s reads each run's tasks off their index, not every task", async (_name, query) => {
  const plans = await plansOf(query);
  expect(plans).toHaveLength(1);
  const [plan] = plans as [string];
  expect(plan).toMatch(/Index Scan using emb_task_history_exec on dba_ai_agent_task_history/);
  expect(plan).not.toMatch(/Seq Scan on dba_ai_agent_task_history/);
});

test.each([
  [
    'a page of runs',
    '{ teamRuns(first: 20) { nodes { execId teamName state startDate endDate } } }',
  ],
  ['a page of runs, backwards', '{ teamRuns(last: 20) { nodes { execId state } } }'],
  ['a page of tool calls', '{ toolCalls(first: 30) { nodes { toolName } } }'],
])(
  '%s comes off its index in its order, and its list sorts and numbers nothing',
  async (_name, query) => {
    const plans = await plansOf(query);
    expect(plans).toHaveLength(1);
    const [plan] = plans as [string];
    expect(plan).toMatch(/Index Scan( Backward)? using emb_(team|tool)_history_newest/);
    expect(plan).not.toMatch(/Sort|WindowAgg/);
  },
);
