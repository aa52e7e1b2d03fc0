import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { messages, PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { Driver } from '../src/db/driver.js';
import { openEmbeddedWorker } from '../src/db/embedded/worker.js';
import { sql } from '../src/db/sql/fragment.js';
import { statement as statementOf } from '../src/db/sql/query.js';
import { startTestServer, type TestServer } from './support/server.js';

/**
 * EMBEDDED_WORKER (the default, so the rest of the suite runs on it) moves PGlite to a worker
 * thread. What the thread boundary could change, each compared with PGlite on the serving
 * thread: answers, statement counts, errors, transactions, closing, and exiting.
 */
let worker: TestServer;
let oneThread: TestServer;
beforeAll(async () => {
  // Both move the demo history to the same instant, so their dates agree to the second.
  const EMBEDDED_DEMO_NOW = new Date().toISOString();
  [worker, oneThread] = await Promise.all([
    startTestServer({ EMBEDDED_DEMO_NOW }),
    startTestServer({ EMBEDDED_WORKER: 'false', EMBEDDED_DEMO_NOW }),
  ]);
});
afterAll(() => Promise.all([worker?.stop(), oneThread?.stop()]));

const DASHBOARD = `{ teams(first: 20) { edges { node { name tools { name }
  runs(first: 10) { totalCount edges { node { execId state startDate
    tasks { taskName state agent { name } toolCalls { toolName startDate endDate } } } } } } } } }`;
const LOOKUP =
  '{ agent(name: "ORDER_ASSISTANT") { name owner createTime inputs { title type } callContract { inputFormat } } }';

const embeddedPg = (t: TestServer) => {
  const pg = t.server.database.embedded?.pg;
  if (!pg) throw new Error('the test server runs on the embedded database');
  return pg;
};

const failure = (run: Promise<unknown>) =>
  run.then(
    () => {
      throw new Error('expected the statement to fail');
    },
    (error: unknown) => error as Error,
  );

describe('a server whose embedded database runs in a worker thread', () => {
  test('answers exactly as on one thread, with the same statements', async () => {
    expect(embeddedPg(oneThread)).toBeInstanceOf(PGlite);
    expect(embeddedPg(worker)).not.toBeInstanceOf(PGlite);
    for (const query of [DASHBOARD, LOOKUP]) {
      const answers = [];
      for (const t of [worker, oneThread]) {
        let result: Awaited<ReturnType<TestServer['post']>> | undefined;
        const statements = await t.countStatements(async () => {
          result = await t.post(query);
        });
        expect(result?.errors).toBeUndefined();
        answers.push({ statements, data: result?.data });
      }
      expect(answers[0]).toEqual(answers[1]);
    }
  });

  test('a PostgreSQL error arrives as PGlite raised it: class, code, position, message', async () => {
    const statement = statementOf(
      'test.missing',
      sql`SELECT OWNER FROM NO_SUCH_VIEW WHERE OWNER = ${sql.placeholder('owner')}`,
    );
    const run = (t: TestServer) =>
      failure(t.server.database.driver.query(statement, { owner: 'APP_USER' }));
    const inWorker = await run(worker);
    const inThread = await run(oneThread);
    expect(inWorker).toBeInstanceOf(messages.DatabaseError);
    expect(inWorker).toMatchObject({
      code: '42P01',
      severity: 'ERROR',
      position: '19',
      message: 'relation "no_such_view" does not exist',
      params: ['APP_USER'],
    });
    expect({ ...inWorker, message: inWorker.message, name: inWorker.name }).toEqual({
      ...inThread,
      message: inThread.message,
      name: inThread.name,
    });
  });

  test('a transaction commits or rolls back, and statements outside it wait for its end', async () => {
    const pg = embeddedPg(worker);
    const count = () =>
      worker.server.database.driver
        .query(statementOf('test.count', sql`SELECT COUNT(*) AS N FROM DBA_AI_AGENT_TEAM_HISTORY`))
        .then(([row]) => Number(row?.n));
    const before = await count();
    const insert = (tx: Pick<typeof pg, 'query'>, execId: string) =>
      tx.query(
        `INSERT INTO dba_ai_agent_team_history VALUES ($1, 'ORDER_SUPPORT_TEAM', 'APP_USER',
           now(), NULL, 'RUNNING', 1)`,
        [execId],
      );

    let outside: Promise<number> | undefined;
    const rolledBack = await failure(
      pg.transaction(async (tx) => {
        await insert(tx, 'WORKER_TEST_ROLLED_BACK');
        outside = count();
        const [row] = (
          await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM dba_ai_agent_team_history')
        ).rows;
        expect(row?.n).toBe(before + 1);
        throw new Error('changed my mind');
      }),
    );
    expect(rolledBack.message).toBe('changed my mind');
    expect(await outside).toBe(before);

    await pg.transaction((tx) => insert(tx, 'WORKER_TEST_COMMITTED'));
    expect(await count()).toBe(before + 1);
    await pg.query('DELETE FROM dba_ai_agent_team_history WHERE team_exec_id = $1', [
      'WORKER_TEST_COMMITTED',
    ]);
  });
});

describe('closing the worker thread', () => {
  let driver: Driver;
  let closed: () => boolean;
  beforeAll(async () => {
    const config = loadConfig({});
    if (config.database.kind !== 'embedded') throw new Error('embedded only');
    const database = await openEmbeddedWorker(config.database);
    driver = database.driver;
    closed = () => database.pg.closed;
  });

  test('lets the statements already sent finish, then ends the thread; later ones fail', async () => {
    const running = driver.query(
      statementOf('test.slow', sql`SELECT COUNT(*) AS N FROM generate_series(1, 2000000)`),
    );
    const queued = driver.query(statementOf('test.queued', sql`SELECT 1 AS ONE`));
    const closing = driver.close();
    expect(closed()).toBe(false);
    expect(await running).toEqual([{ n: 2_000_000 }]);
    expect(await queued).toEqual([{ one: 1 }]);
    await closing;
    expect(closed()).toBe(true);
    const after = await failure(driver.query(statementOf('test.after', sql`SELECT 1 AS ONE`)));
    expect(after.message).toBe('PGlite is closed');
    await driver.close();
  });

  test('a process that never closes it still exits once its statements are answered', async () => {
    const script = `
      import { loadConfig } from './src/config.ts';
      import { openEmbeddedWorker } from './src/db/embedded/worker.ts';
      import { sql } from './src/db/sql/fragment.ts';
      import { statement } from './src/db/sql/query.ts';
      const database = await openEmbeddedWorker(loadConfig({}).database);
      const [row] = await database.driver.query(statement('one', sql\`SELECT 1 AS ONE\`));
      console.log(JSON.stringify(row));`;
    const child = promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: new URL('..', import.meta.url) },
    );
    // A process that hangs fails the test by its timeout; it must not outlive it.
    onTestFinished(() => {
      child.child.kill();
    });
    const { stdout } = await child;
    expect(stdout).toBe('{"one":1}\n');
  });
});
