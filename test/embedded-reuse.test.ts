import { afterAll, expect, test } from 'vitest';
import type { EmbeddedPg } from '../src/db/embedded/database.js';
import { PRISTINE_SCHEMA } from '../src/db/embedded/reuse.js';
import { databaseCounts } from './support/databases.js';
import { startTestServer, type TestServer } from './support/server.js';

/**
 * The embedded databases the test servers of a worker share in turn (test/support/databases.ts,
 * src/db/embedded/reuse.ts): the next server gets its database as a new one would open, whatever
 * the server before it did to it, or a new one.
 */
const EMBEDDED_DEMO_NOW = new Date().toISOString();

const started: TestServer[] = [];
afterAll(() => Promise.all(started.map((t) => t.stop())));

async function start(...args: Parameters<typeof startTestServer>): Promise<TestServer> {
  const t = await startTestServer(...args);
  started.push(t);
  return t;
}

function pgOf(t: TestServer): EmbeddedPg {
  const pg = t.server.database.embedded?.pg;
  if (!pg) throw new Error('the test server runs on the embedded database');
  return pg;
}

/** Every row of every table, and what the session holds: what a new database must equal. */
async function state(pg: EmbeddedPg) {
  const { rows: tables } = await pg.query<{ name: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema', $1)
       AND n.nspname NOT LIKE 'pg\\_%' ORDER BY 1`,
    [PRISTINE_SCHEMA],
  );
  const rows: Record<string, string> = {};
  for (const { name } of tables) {
    const { rows: digest } = await pg.query<{ digest: string | null; count: number }>(
      `SELECT md5(string_agg(t::text, E'\\n' ORDER BY t::text)) AS digest, count(*)::int AS count FROM ${name} t`,
    );
    rows[name] = `${digest[0]?.count} ${digest[0]?.digest}`;
  }
  const session = async (text: string) => (await pg.query(text)).rows;
  return {
    rows,
    settings: await session(
      `SELECT name, setting FROM pg_settings WHERE source NOT IN ('default', 'override') ORDER BY name`,
    ),
    sessionUser: await session(`SELECT current_setting('agentgraph.session_user', true) AS user`),
    prepared: await session('SELECT statement FROM pg_prepared_statements ORDER BY statement'),
    listening: await session('SELECT pg_listening_channels() AS channel'),
    temporary: await session(`SELECT relname FROM pg_class WHERE relpersistence = 't'`),
    locks: await session(`SELECT objid FROM pg_locks WHERE locktype = 'advisory'`),
    cursors: await session('SELECT name FROM pg_cursors'),
  };
}

test('a database handed to the next server holds what a new one does, nothing of the server before', async () => {
  const fresh = await start({ EMBEDDED_DEMO_NOW }, { ownDatabase: true });
  const expected = await state(pgOf(fresh));

  const first = await start({ EMBEDDED_DEMO_NOW });
  const pg = pgOf(first);
  await pg.exec(`
    UPDATE dba_ai_agent_team_history SET state = 'FAILED', end_date = end_date + interval '1 day';
    DELETE FROM dba_ai_agent_tool_history WHERE task_order > 1;
    INSERT INTO dba_ai_agent_teams SELECT * FROM dba_ai_agent_teams LIMIT 0;
    DELETE FROM emb_agent_specs;
    SET statement_timeout = 1234;
    SET search_path TO pg_catalog;
    SELECT set_config('agentgraph.session_user', 'OPS', false);
    PREPARE leftover AS SELECT 1;
    LISTEN leftover;
    CREATE TEMP TABLE leftover (n int);
    SELECT pg_advisory_lock(42);
    BEGIN; DECLARE leftover CURSOR WITH HOLD FOR SELECT 1; COMMIT;
  `);
  expect((await state(pg)).rows).not.toEqual(expected.rows);
  const before = { ...databaseCounts };
  await first.stop();
  // Released, it serves the stopped server no more, as a closed database would.
  expect(pg.closed).toBe(true);
  await expect(pg.query('SELECT 1')).rejects.toThrow('PGlite is closed');

  const second = await start({ EMBEDDED_DEMO_NOW });
  expect(databaseCounts).toEqual({ ...before, reused: before.reused + 1 });
  expect(await state(pgOf(second))).toEqual(expected);
  await second.stop();
  await fresh.stop();
});

test('the next server gets its own session user and the history moved to its own present', async () => {
  const first = await start({ EMBEDDED_DEMO_NOW });
  const newest = `SELECT max(start_date) AS newest FROM dba_ai_agent_team_history`;
  const { rows: then } = await pgOf(first).query<{ newest: Date }>(newest);
  await first.stop();

  const later = new Date(Date.parse(EMBEDDED_DEMO_NOW) + 3_600_000).toISOString();
  const before = { ...databaseCounts };
  const second = await start({ EMBEDDED_DEMO_NOW: later, EMBEDDED_SESSION_USER: 'ANALYST' });
  expect(databaseCounts.reused).toBe(before.reused + 1);
  const { rows: now } = await pgOf(second).query<{ newest: Date }>(newest);
  expect(now[0]?.newest.getTime()).toBe((then[0]?.newest.getTime() ?? 0) + 3_600_000);
  const { rows: user } = await pgOf(second).query(
    `SELECT sys_context('USERENV', 'SESSION_USER') AS "user"`,
  );
  expect(user).toEqual([{ user: 'ANALYST' }]);
  await second.stop();
});

test.each([
  'ALTER VIEW v$agent_exec_stat RENAME TO v$agent_exec_stat_gone',
  'ALTER TABLE gv$agent_exec_stat ADD COLUMN leftover int',
  `CREATE FUNCTION leftover() RETURNS int LANGUAGE sql AS 'SELECT 1'`,
])(
  'a database whose schema a server changed is closed, and the next server gets another: %s',
  async (change) => {
    const first = await start();
    const pg = pgOf(first);
    await pg.exec(change);
    await first.stop();

    const before = { ...databaseCounts };
    const second = await start();
    // Another file's idle database, reset, or a new one.
    expect(databaseCounts.discarded).toBe(before.discarded + 1);
    const { errors, data } = await second.post('{ execStats(first: 1) { totalCount } }');
    expect(errors).toBeUndefined();
    expect(data).toMatchObject({ execStats: { totalCount: expect.any(Number) } });
    await second.stop();
  },
);
