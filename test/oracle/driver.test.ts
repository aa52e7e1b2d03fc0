import oracledb from 'oracledb';
import { afterAll, describe, expect, test, vi } from 'vitest';
import { dateColumnTypes, discoverCatalog } from '../../src/db/catalog.js';
import { discoverDatabase } from '../../src/db/discover.js';
import type { Binds } from '../../src/db/driver.js';
import {
  columnsStatement,
  fetchTypeHandler,
  type OracleConnection,
  OracleDriver,
  type OraclePool,
  type OraclePoolStatistics,
  openOracleDriver,
  withAgentDetails,
} from '../../src/db/oracle/driver.js';
import { poolAttributes } from '../../src/db/oracle/options.js';
import { sql } from '../../src/db/sql/fragment.js';
import { blockStatement, statement as statementOf } from '../../src/db/sql/query.js';
import { AppError, StartupError } from '../../src/errors.js';
import { Metrics } from '../../src/metrics.js';
import { ANONYMOUS_ADMIN } from '../../src/model/viewer.js';
import { TeamHistoryRepository } from '../../src/repositories/team-history.js';
import { databaseError, njsError } from './oracledb-errors.js';
import { closedPort, oracleTestConfig, silentListener } from './support.js';

interface Call {
  readonly sql: string;
  readonly binds: oracledb.BindParameters;
  readonly options: oracledb.ExecuteOptions;
  readonly callTimeout: number | undefined;
}

/** A pool whose connections answer each execute with the next scripted result or error. */
function fakePool(
  script: (Record<string, unknown>[] | Error | { outBinds: Record<string, unknown> })[],
) {
  const calls: Call[] = [];
  const state = { released: 0, acquired: 0, breaks: 0, closedWith: [] as number[] };
  let statistics: OraclePoolStatistics | null = null;
  const pool: OraclePool = {
    async getConnection() {
      state.acquired++;
      const connection: OracleConnection = {
        callTimeout: undefined,
        async execute<T>(
          sql: string,
          binds: oracledb.BindParameters,
          options: oracledb.ExecuteOptions,
        ) {
          calls.push({ sql, binds, options, callTimeout: connection.callTimeout });
          const next = script.shift();
          if (next === undefined) throw new Error('unscripted execute');
          if (next instanceof Error) throw next;
          if (!Array.isArray(next)) return next as oracledb.Result<T>;
          return { rows: next } as oracledb.Result<T>;
        },
        async close() {
          state.released++;
        },
        async break() {
          state.breaks++;
        },
      };
      return connection;
    },
    async close(drainSeconds) {
      state.closedWith.push(drainSeconds);
    },
    getStatistics: () => statistics,
  };
  return {
    pool,
    calls,
    state,
    setStatistics: (value: OraclePoolStatistics | null) => {
      statistics = value;
    },
  };
}

const statement = statementOf('agents.page', sql`SELECT AGENT_NAME FROM DBA_AI_AGENTS`);

describe('OracleDriver over a pool', () => {
  test('passes :name binds through, as objects, with the call timeout set', async () => {
    const fake = fakePool([[]]);
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1234 });
    const binds: Binds = {
      page_offset: 0,
      page_limit: 20,
      name0: 'A',
      since: new Date(0),
      x: null,
    };
    await driver.query(
      statementOf(
        'x',
        sql`SELECT * FROM T WHERE A = ${sql.placeholder('name0')} OFFSET ${sql.placeholder('page_offset')} ROWS FETCH NEXT ${sql.placeholder('page_limit')} ROWS ONLY`,
      ),
      binds,
    );
    const [call] = fake.calls;
    expect(call?.sql).toBe(
      'SELECT * FROM T WHERE A = :name0 OFFSET :page_offset ROWS FETCH NEXT :page_limit ROWS ONLY',
    );
    expect(call?.binds).toEqual(binds);
    expect(call?.callTimeout).toBe(1234);
    expect(call?.options.outFormat).toBe(oracledb.OUT_FORMAT_OBJECT);
    expect(call?.options.fetchTypeHandler).toBe(fetchTypeHandler);
    expect(fake.state.released).toBe(1);
  });

  test('normalises UPPER_CASE rows: camelCase keys, CLOB strings and Dates kept', async () => {
    const created = new Date('2026-08-20T12:34:56Z');
    const fake = fakePool([
      [
        {
          AGENT_ID: 1001,
          AGENT_NAME: 'ORDER_REQUEST_FLOW',
          CREATE_TIME: created,
          INPUTS: '[{"title":"order_id","type":"string"}]',
          AGENT_EXECUTOR_TOTAL_TIME_EXEC: 1840,
          M12: 7,
          TOTAL_COUNT: 7,
        },
      ],
    ]);
    const rows = await new OracleDriver(fake.pool, { callTimeoutMs: 1 }).query(statement);
    expect(rows).toEqual([
      {
        agentId: 1001,
        agentName: 'ORDER_REQUEST_FLOW',
        createTime: created,
        inputs: '[{"title":"order_id","type":"string"}]',
        agentExecutorTotalTimeExec: 1840,
        m12: 7,
        totalCount: 7,
      },
    ]);
  });

  test('queryWithAgentDetails wraps the statement in one round trip with an inline function', async () => {
    const fake = fakePool([[{ AGENT_NAME: 'A', AGENT_DETAILS: '{"name":"A"}' }]]);
    const rows = await new OracleDriver(fake.pool, { callTimeoutMs: 1 }).queryWithAgentDetails(
      statement,
      { page_offset: 0 },
    );
    expect(fake.calls).toHaveLength(1);
    const sql = fake.calls[0]?.sql ?? '';
    expect(sql).toBe(withAgentDetails(statement));
    expect(sql).toMatch(/^WITH FUNCTION describe_agent_or_null\(p VARCHAR2\) RETURN CLOB IS /);
    expect(sql).toContain(
      'DBMS_AI_AGENT.DESCRIBE_AGENT(agent_name => p, agent_details => l); RETURN l; EXCEPTION WHEN OTHERS THEN IF SQLCODE = -1013 THEN RAISE; END IF; RETURN NULL; END;',
    );
    // A break (ORA-01013) inside DESCRIBE_AGENT is raised again, not read as a NULL: the
    // statement stops instead of describing the remaining rows (issue 34, item 7).
    expect(sql).not.toMatch(/WHEN OTHERS THEN RETURN NULL/);
    expect(sql).toMatch(
      /SELECT q\.\*, CASE WHEN q\.OWNER IS NULL OR q\.OWNER = SYS_CONTEXT\('USERENV', 'SESSION_USER'\) THEN describe_agent_or_null\(q\.AGENT_NAME\) END AS AGENT_DETAILS FROM \(SELECT AGENT_NAME FROM DBA_AI_AGENTS\) q$/,
    );
    // The inline PL/SQL adds no bind placeholders of its own.
    expect(sql.replace(statement.text, '')).not.toMatch(/:[A-Za-z]/);
    expect(rows).toEqual([{ agentName: 'A', agentDetails: '{"name":"A"}' }]);
  });

  test('without a callable DESCRIBE_AGENT (ORA-06550) it warns once and reads rows without details', async () => {
    const compileError = databaseError(
      "ORA-06550: line 1, column 93:\nPLS-00201: identifier 'DBMS_AI_AGENT.DESCRIBE_AGENT' must be declared",
      93,
    );
    const fake = fakePool([compileError, [{ AGENT_NAME: 'A', AGENT_DETAILS: null }], []]);
    const warn = vi.fn();
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1, warn });
    expect(await driver.queryWithAgentDetails(statement)).toEqual([
      { agentName: 'A', agentDetails: null },
    ]);
    await driver.queryWithAgentDetails(statement);
    expect(fake.calls.map((c) => c.sql.slice(0, 30))).toEqual([
      'WITH FUNCTION describe_agent_o',
      'SELECT q.*, NULL AS AGENT_DETA',
      'SELECT q.*, NULL AS AGENT_DETA',
    ]);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[0]).toMatch(/grant EXECUTE ON DBMS_AI_AGENT.*PLS-00201/);
    expect(fake.state.released).toBe(3);
  });

  // What Oracle raises when an inline WITH FUNCTION does not compile: ORA-06552 and the PLS-
  // error as ORA-06553 (PLS- numbers without leading zeros in that message).
  const inlineCompileErrors = {
    '19c from 19.29 (no DBMS_AI_AGENT), or 26ai without a direct EXECUTE grant':
      "ORA-06552: PL/SQL: Statement ignored\nORA-06553: PLS-201: identifier 'DBMS_AI_AGENT.DESCRIBE_AGENT' must be declared",
    'another DESCRIBE_AGENT signature':
      "ORA-06552: PL/SQL: Statement ignored\nORA-06553: PLS-306: wrong number or types of arguments in call to 'DESCRIBE_AGENT'",
  };

  for (const [when, message] of Object.entries(inlineCompileErrors)) {
    test(`the start-up probe decides "not callable" on an inline compile error: ${when}`, async () => {
      const fake = fakePool([databaseError(message), [{ AGENT_NAME: 'A', AGENT_DETAILS: null }]]);
      const warn = vi.fn();
      const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1, warn });
      const decision = await driver.probeAgentDetails();
      expect(decision.callable).toBe(false);
      expect(decision.reason).toMatch(/^ORA-06553: PLS-(201|306): /);
      expect(fake.calls[0]?.sql).toMatch(
        /^WITH FUNCTION .* FROM \(SELECT CAST\(NULL AS VARCHAR\(128\)\) AS OWNER, CAST\(NULL AS VARCHAR\(128\)\) AS AGENT_NAME FROM DUAL\) q ORDER BY q\.AGENT_NAME$/,
      );
      // Decided once: the agents list goes straight to the statement without details.
      expect(await driver.queryWithAgentDetails(statement)).toEqual([
        { agentName: 'A', agentDetails: null },
      ]);
      expect(fake.calls.map((c) => c.sql.slice(0, 30))).toEqual([
        'WITH FUNCTION describe_agent_o',
        'SELECT q.*, NULL AS AGENT_DETA',
      ]);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0]?.[0]).toMatch(/grant EXECUTE ON DBMS_AI_AGENT.*PLS-(201|306)/);
    });
  }

  test('the probe answers "callable" when the wrapper runs, and other errors are not a decision', async () => {
    const fake = fakePool([[{ AGENT_NAME: null, AGENT_DETAILS: null }], njsError(123, 1)]);
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1 });
    expect(await driver.probeAgentDetails()).toEqual({ callable: true, reason: null });
    await expect(driver.probeAgentDetails()).rejects.toMatchObject({ code: 'TIMEOUT' });
  });

  test('a PLS- compile error raised later (a grant revoked) also reads rows without details', async () => {
    const fake = fakePool([databaseError(Object.values(inlineCompileErrors)[0] as string), []]);
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1 });
    expect(await driver.queryWithAgentDetails(statement)).toEqual([]);
    expect(fake.calls[1]?.sql).toBe(`SELECT q.*, NULL AS AGENT_DETAILS FROM (${statement.text}) q`);
  });

  test('both wrappers repeat the statement’s order outside (Oracle keeps no subquery order)', async () => {
    const ordered = statementOf('agents.page', sql`SELECT AGENT_NAME FROM DBA_AI_AGENTS`, [
      'OWNER',
      'AGENT_NAME',
    ]);
    const fake = fakePool([[], databaseError(Object.values(inlineCompileErrors)[0] as string), []]);
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1 });
    await driver.queryWithAgentDetails(ordered);
    await driver.queryWithAgentDetails(ordered);
    for (const call of fake.calls) {
      expect(call.sql.endsWith(`FROM (${statement.text}) q ORDER BY q.OWNER, q.AGENT_NAME`)).toBe(
        true,
      );
    }
    expect(fake.calls[2]?.sql).toMatch(/^SELECT q\.\*, NULL AS AGENT_DETAILS FROM/);
  });

  test('start-up discovery: SESSION_USER owns the USER_ rows, the dictionary gets its own timeout, date types are kept', async () => {
    const fake = fakePool([
      // A quoted lower-case user through a proxy login: ORACLE_USER.toUpperCase() is wrong.
      [{ USER_NAME: 'agentgraph', SCHEMA_NAME: 'AGENTS_OWNER', TIME_ZONE_OFFSET: '+00:00' }],
      [
        {
          VIEW_NAME: 'USER_AI_AGENT_TEAM_HISTORY',
          COLUMN_NAME: 'TEAM_EXEC_ID',
          DATA_TYPE: 'VARCHAR2',
          PRECEDENCE: 2,
        },
        {
          VIEW_NAME: 'USER_AI_AGENT_TEAM_HISTORY',
          COLUMN_NAME: 'START_DATE',
          DATA_TYPE: 'TIMESTAMP(6) WITH TIME ZONE',
          PRECEDENCE: 2,
        },
        { VIEW_NAME: 'USER_AI_AGENTS', COLUMN_NAME: 'CREATED', DATA_TYPE: 'DATE', PRECEDENCE: 2 },
      ],
      [{ AGENT_NAME: null, AGENT_DETAILS: null }],
      [],
    ]);
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1000, discoveryTimeoutMs: 45_000 });
    const discovery = await discoverDatabase(driver, 'user');
    expect(fake.calls[0]?.sql).toContain(
      "SYS_CONTEXT('USERENV', 'SESSION_USER') AS USER_NAME, SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') AS SCHEMA_NAME",
    );
    expect(discovery.session).toEqual({
      sessionUser: 'agentgraph',
      currentSchema: 'AGENTS_OWNER',
      timeZoneOffset: '+00:00',
    });
    expect(discovery.catalog.sessionUser).toBe('agentgraph');
    expect(fake.calls.map((c) => c.callTimeout)).toEqual([1000, 45_000, 1000, 1000]);
    expect(Object.fromEntries(dateColumnTypes(discovery.catalog))).toEqual({
      'USER_AI_AGENTS.CREATED': 'DATE',
      'USER_AI_AGENT_TEAM_HISTORY.START_DATE': 'TIMESTAMP(6) WITH TIME ZONE',
    });
    expect(discovery.agentDetails.callable).toBe(true);
    // No EXECUTE_AGENT in ALL_ARGUMENTS: executeAgent is FORBIDDEN, saying so.
    expect(discovery.executeAgent.plain).toBeNull();
    expect(discovery.executeAgent.missing).toMatch(/EXECUTE ON DBMS_AI_AGENT/);
    expect(discovery.durationMs).toBeGreaterThanOrEqual(0);
  });

  test('a dictionary slower than DB_DISCOVERY_TIMEOUT_MS stops start-up with one line naming it', async () => {
    const fake = fakePool([
      [{ USER_NAME: 'AGENTGRAPH', SCHEMA_NAME: 'AGENTGRAPH', TIME_ZONE_OFFSET: '+00:00' }],
      njsError(123, 45_000),
      // The probe and ALL_ARGUMENTS, sent beside the dictionary's statement, answer.
      [{ AGENT_NAME: null, AGENT_DETAILS: null }],
      [],
    ]);
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1000, discoveryTimeoutMs: 45_000 });
    const error = await discoverDatabase(driver, 'user').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).toBe(
      'the data dictionary (ALL_SYNONYMS, ALL_TAB_COLUMNS) did not answer within DB_DISCOVERY_TIMEOUT_MS; raise it',
    );
  });

  test('concurrent statements that all hit ORA-06550 warn once', async () => {
    const compileError = () => databaseError('ORA-06550: line 1, column 93:\nPLS-00904: x', 93);
    const fake = fakePool([compileError(), compileError(), [], []]);
    const warn = vi.fn();
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1, warn });
    await Promise.all([
      driver.queryWithAgentDetails(statement),
      driver.queryWithAgentDetails(statement),
    ]);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  test('driver errors are mapped where they happen, and the connection is released', async () => {
    const count = statementOf('n', sql`SELECT COUNT(*) AS N FROM V$AGENT_EXEC_STAT`);
    const fake = fakePool([databaseError('ORA-00942: table or view does not exist', 25)]);
    const error = await new OracleDriver(fake.pool, { callTimeoutMs: 1 })
      .query(count)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'FORBIDDEN' });
    expect((error as Error).message).toMatch(/^V\$AGENT_EXEC_STAT is missing or not granted/);
    expect(fake.state.released).toBe(1);
  });

  test('a pool queue timeout while acquiring is TIMEOUT', async () => {
    const pool: OraclePool = {
      getConnection: () => Promise.reject(njsError(40, 5000)),
      close: async () => undefined,
      getStatistics: () => null,
    };
    await expect(new OracleDriver(pool, { callTimeoutMs: 1 }).ping()).rejects.toMatchObject({
      code: 'TIMEOUT',
    });
  });

  test('columnsOf resolves names as the statements do: own schema first, else the public synonym', async () => {
    const fake = fakePool([
      [
        {
          VIEW_NAME: 'DBA_AI_AGENTS',
          COLUMN_NAME: 'AGENT_NAME',
          DATA_TYPE: 'VARCHAR2',
          PRECEDENCE: 2,
        },
        {
          VIEW_NAME: 'DBA_AI_AGENTS',
          COLUMN_NAME: 'DESCRIPTION',
          DATA_TYPE: 'CLOB',
          PRECEDENCE: 2,
        },
        {
          VIEW_NAME: 'V$AGENT_EXEC_STAT',
          COLUMN_NAME: 'CON_ID',
          DATA_TYPE: 'NUMBER',
          PRECEDENCE: 2,
        },
        {
          VIEW_NAME: 'V$AGENT_EXEC_STAT',
          COLUMN_NAME: 'INST_ID',
          DATA_TYPE: 'NUMBER',
          PRECEDENCE: 1,
        },
        {
          VIEW_NAME: 'V$AGENT_EXEC_STAT',
          COLUMN_NAME: 'AGENT_EXECUTOR_INPUT_TOKENS',
          DATA_TYPE: 'NUMBER',
          PRECEDENCE: 1,
        },
        {
          VIEW_NAME: 'V$AGENT_EXEC_STAT',
          COLUMN_NAME: 'AGENT_ID',
          DATA_TYPE: 'NUMBER',
          PRECEDENCE: 2,
        },
      ],
    ]);
    const columns = await new OracleDriver(fake.pool, { callTimeoutMs: 1 }).columnsOf([
      'DBA_AI_AGENTS',
      'V$AGENT_EXEC_STAT',
      'GV$AGENT_EXEC_STAT',
    ]);
    expect(columns).toEqual(
      new Map([
        [
          'DBA_AI_AGENTS',
          new Map([
            ['AGENT_NAME', 'VARCHAR2'],
            ['DESCRIPTION', 'CLOB'],
          ]),
        ],
        [
          'V$AGENT_EXEC_STAT',
          new Map([
            ['INST_ID', 'NUMBER'],
            ['AGENT_EXECUTOR_INPUT_TOKENS', 'NUMBER'],
          ]),
        ],
      ]),
    );
    const [call] = fake.calls;
    // IN lists are padded to a few sizes (repeating the last name) for the statement cache.
    expect(call?.binds).toEqual({
      view0: 'DBA_AI_AGENTS',
      view1: 'V$AGENT_EXEC_STAT',
      view2: 'GV$AGENT_EXEC_STAT',
      view3: 'GV$AGENT_EXEC_STAT',
    });
    expect(call?.sql).toBe(
      columnsStatement(['DBA_AI_AGENTS', 'V$AGENT_EXEC_STAT', 'GV$AGENT_EXEC_STAT']).text,
    );
    expect(call?.sql).toContain(
      'FROM USER_TAB_COLUMNS c WHERE c.TABLE_NAME IN (:view0, :view1, :view2, :view3)',
    );
    expect(call?.sql).toContain(
      "WHERE s.OWNER = 'PUBLIC' AND s.SYNONYM_NAME IN (:view0, :view1, :view2, :view3)",
    );
  });

  test('ping is SELECT 1 FROM DUAL; close drains once; statistics are mapped', async () => {
    const fake = fakePool([[{ 1: 1 }]]);
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1 });
    await driver.ping();
    expect(fake.calls[0]?.sql).toBe('SELECT 1 FROM DUAL');
    expect(driver.poolStatistics()).toBeNull();
    fake.setStatistics({
      connectionsOpen: 3,
      connectionsInUse: 2,
      currentQueueLength: 1,
      requestTimeouts: 4,
    });
    expect(driver.poolStatistics()).toEqual({
      connectionsOpen: 3,
      connectionsInUse: 2,
      queueLength: 1,
      queueTimeouts: 4,
    });
    await driver.close(5);
    await driver.close(5);
    expect(fake.state.closedWith).toEqual([5]);
  });
});

describe('fetching', () => {
  const meta = (dbType: unknown) => ({ dbType }) as oracledb.Metadata<unknown>;

  test('CLOB and NCLOB columns are fetched as strings', () => {
    expect(fetchTypeHandler(meta(oracledb.DB_TYPE_CLOB))).toEqual({ type: oracledb.STRING });
    expect(fetchTypeHandler(meta(oracledb.DB_TYPE_NCLOB))).toEqual({ type: oracledb.STRING });
  });

  test('a history list comes back as one JSON CLOB and reads as before, whatever TZ the process runs in', async () => {
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      const column = (view: string, name: string, type = 'VARCHAR2') => ({
        VIEW_NAME: view,
        COLUMN_NAME: name,
        DATA_TYPE: type,
        PRECEDENCE: 2,
      });
      const tasks = 'DBA_AI_AGENT_TASK_HISTORY';
      const calls = 'DBA_AI_AGENT_TOOL_HISTORY';
      const fake = fakePool([
        [
          ...['TEAM_EXEC_ID', 'TEAM_NAME', 'TASK_OWNER', 'AGENT_NAME', 'TASK_NAME', 'STATE'].map(
            (name) => column(tasks, name),
          ),
          ...['COVERSATION_PARAM', 'INPUT', 'RESULT'].map((name) => column(tasks, name, 'CLOB')),
          column(tasks, 'TASK_ORDER', 'NUMBER'),
          column(tasks, 'START_DATE', 'TIMESTAMP(6)'),
          column(tasks, 'END_DATE', 'TIMESTAMP(6)'),
          ...['INVOCATION_ID', 'TEAM_EXEC_ID', 'TOOL_OWNER', 'TOOL_NAME', 'AGENT_NAME'].map(
            (name) => column(calls, name),
          ),
          column(calls, 'TASK_ORDER', 'NUMBER'),
          column(calls, 'START_DATE', 'TIMESTAMP(6)'),
        ],
        // What Oracle's JSON_ARRAY of the row count and JSON_ARRAYAGGs renders, one column per
        // member in the select list's order, one value per task: TIMESTAMPs as zone-less ISO
        // text, NUMBERs as numbers, CLOBs as strings, NULL as null; over no rows every
        // JSON_ARRAYAGG is NULL, which JSON_ARRAY (NULL ON NULL) keeps in its place.
        [
          {
            ROWS_JSON: JSON.stringify([
              1,
              ...[
                'E1',
                'T',
                'APP_USER',
                'A',
                'K',
                1,
                'c-1',
                'SUCCEEDED',
                '2026-09-15T12:30:00.250000',
                null,
                '{"conversation_id":"c-1"}',
                'in',
                null,
              ].map((value) => [value]),
            ]),
          },
        ],
        [{ ROWS_JSON: JSON.stringify([0, ...Array(12).fill(null)]) }],
      ]);
      const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1000 });
      const catalog = await discoverCatalog(driver, 'dba', 'APP_USER');
      const history = new TeamHistoryRepository(driver, catalog, ANONYMOUS_ADMIN);

      expect(await history.tasksOf(['E1', 'E2'])).toEqual([
        [
          {
            teamExecId: 'E1',
            teamName: 'T',
            owner: 'APP_USER',
            agentName: 'A',
            taskName: 'K',
            taskOrder: 1,
            conversationParams: { conversation_id: 'c-1' },
            conversationId: 'c-1',
            input: 'in',
            result: null,
            state: 'SUCCEEDED',
            startDate: new Date('2026-09-15T12:30:00.250Z'),
            endDate: null,
          },
        ],
        [],
      ]);
      expect(await history.toolCallsOf(['E9'])).toEqual([[]]);
      expect(fake.calls[1]?.sql).toMatch(
        /^SELECT JSON_ARRAY\(COUNT\(\*\), JSON_ARRAYAGG\(q\.TEAM_EXEC_ID ORDER BY q\.SEQ NULL ON NULL RETURNING CLOB\), JSON_ARRAYAGG\(q\.TEAM_NAME .* NULL ON NULL RETURNING CLOB\) AS ROWS_JSON FROM \(SELECT s\.TEAM_EXEC_ID, .*, ROW_NUMBER\(\) OVER \(ORDER BY s\.TEAM_EXEC_ID, s\.TASK_ORDER, s\.START_DATE\) AS SEQ FROM \(SELECT /,
      );
      // One column each: no JSON value per row, hence no temporary LOB per row. The tasks'
      // inner queries number the rows once in the list's order; the calls' order ends in
      // INVOCATION_ID, a total order every aggregate sorts by.
      const members = [
        'INVOCATION_ID',
        'TEAM_EXEC_ID',
        'TASK_ORDER',
        'TOOL_OWNER',
        'TOOL_NAME',
        'AGENT_NAME',
        'TASK_NAME',
        'START_DATE',
        'END_DATE',
        'INPUT',
        'OUTPUT',
        'TOOL_OUTPUT',
      ];
      expect(fake.calls[2]?.sql).toContain(
        `SELECT JSON_ARRAY(COUNT(*), ${members
          .map(
            (column) =>
              `JSON_ARRAYAGG(q.${column} ORDER BY q.TEAM_EXEC_ID, q.TASK_ORDER, q.START_DATE, q.INVOCATION_ID NULL ON NULL RETURNING CLOB)`,
          )
          .join(
            ', ',
          )} NULL ON NULL RETURNING CLOB) AS ROWS_JSON FROM (SELECT ${members.join(', ')} FROM`,
      );
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  test('other types, dates included, are left to the driver (the process runs in UTC)', () => {
    for (const dbType of [
      oracledb.DB_TYPE_DATE,
      oracledb.DB_TYPE_TIMESTAMP,
      oracledb.DB_TYPE_VARCHAR,
      oracledb.DB_TYPE_NUMBER,
      oracledb.DB_TYPE_TIMESTAMP_TZ,
      oracledb.DB_TYPE_TIMESTAMP_LTZ,
      oracledb.DB_TYPE_JSON,
    ]) {
      expect(fetchTypeHandler(meta(dbType))).toBeUndefined();
    }
  });
});

describe('against loopback ports (real node-oracledb connection attempts)', () => {
  const listeners: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(listeners.map((l) => l.close()));
  });

  test('a refused connection is UPSTREAM_UNAVAILABLE with the NJS-503 as cause', async () => {
    const config = oracleTestConfig({
      ORACLE_CONNECT_STRING: `127.0.0.1:${await closedPort()}/none`,
    });
    const pool = await oracledb.createPool(poolAttributes(config));
    const driver = new OracleDriver(pool as unknown as OraclePool, { callTimeoutMs: 1000 });
    const error = await driver.ping().catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      message: 'the database is unavailable',
    });
    expect((error as AppError).cause).toMatchObject({ code: 'NJS-503' });
    await driver.close();
  });

  test('a silent database: waits end with NJS-040 → TIMEOUT, counted by the pool metrics', async () => {
    const silent = await silentListener();
    listeners.push(silent);
    const config = oracleTestConfig({
      ORACLE_CONNECT_STRING: `127.0.0.1:${silent.port}/none`,
      DB_POOL_MAX: '1',
      DB_QUEUE_TIMEOUT_MS: '200',
      // Closing waits for the connect still in progress.
      DB_CONNECT_TIMEOUT_MS: '1000',
    });
    const pool = await oracledb.createPool(poolAttributes(config));
    const driver = new OracleDriver(pool as unknown as OraclePool, { callTimeoutMs: 1000 });
    const metrics = new Metrics();
    metrics.observeDatabasePool(() => driver.poolStatistics());

    // node-oracledb bounds both the wait for the connection being opened and the wait in the
    // queue behind it by queueTimeout.
    const errors = await Promise.all([driver.ping(), driver.ping()].map((p) => p.catch((e) => e)));
    for (const error of errors) {
      expect(error).toMatchObject({ code: 'TIMEOUT' });
      expect((error as AppError).cause).toMatchObject({ code: 'NJS-040' });
    }
    const text = await metrics.registry.metrics();
    expect(text).toContain('agentgraph_db_pool_connections{state="open"} 0');
    expect(text).toContain('agentgraph_db_pool_connections{state="in_use"} 0');
    expect(text).toContain('agentgraph_db_pool_queue_length 0');
    expect(text).toContain('agentgraph_db_pool_queue_timeouts_total 2');
    await driver.close();
  });

  test('openOracleDriver fails a refused connection at once with a StartupError', async () => {
    const started = Date.now();
    const config = oracleTestConfig({
      ORACLE_CONNECT_STRING: `127.0.0.1:${await closedPort()}/none`,
    });
    const error = await openOracleDriver(config).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).toMatch(
      /^cannot connect to Oracle at 127\.0\.0\.1:\d+\/none: NJS-503: .*ECONNREFUSED/,
    );
    expect(Date.now() - started).toBeLessThan(config.connectTimeoutMs);
  });

  test('openOracleDriver gives up on a silent database at DB_CONNECT_TIMEOUT_MS', async () => {
    const silent = await silentListener();
    listeners.push(silent);
    const config = oracleTestConfig({
      ORACLE_CONNECT_STRING: `127.0.0.1:${silent.port}/none`,
      DB_CONNECT_TIMEOUT_MS: '800',
    });
    const started = Date.now();
    const error = await openOracleDriver(config).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).toBe(
      `no answer from Oracle at 127.0.0.1:${silent.port}/none within 800 ms (DB_CONNECT_TIMEOUT_MS)`,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(750);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('OracleDriver.runBlock (the RUN_TEAM hand-off)', () => {
  const block = {
    name: 'runTeam.submit',
    oracle: blockStatement(
      'runTeam.submit',
      sql`BEGIN ${sql.placeholder('outcome')} := ${sql.placeholder('exec_id')}; ${sql.placeholder('run_state')} := NULL; END;`,
    ),
    embedded: statementOf('runTeam.submit', sql`SELECT 'unused here'`),
    outputs: ['outcome', 'run_state'],
    privileges: 'CREATE JOB, EXECUTE ON DBMS_CLOUD_AI_AGENT and EXECUTE ON DBMS_CLOUD_AI',
  };

  test('binds the inputs, declares the outputs as OUT strings, and returns them as a row', async () => {
    const fake = fakePool([{ outBinds: { outcome: 'NOT_WAITING', run_state: 'RESUMING' } }]);
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1000 });
    const row = await driver.runBlock(block, { exec_id: 'E1' });
    expect(row).toEqual({ outcome: 'NOT_WAITING', runState: 'RESUMING' });
    expect(fake.calls[0]?.sql).toBe('BEGIN :outcome := :exec_id; :run_state := NULL; END;');
    expect(fake.calls[0]?.binds).toEqual({
      exec_id: 'E1',
      outcome: { dir: oracledb.BIND_OUT, type: oracledb.STRING, maxSize: 4000 },
      run_state: { dir: oracledb.BIND_OUT, type: oracledb.STRING, maxSize: 4000 },
    });
    expect(fake.state.released).toBe(1);
  });

  test('a scheduler or package refusal is FORBIDDEN, naming the privileges, without ORA- text', async () => {
    for (const error of [
      databaseError('ORA-27486: insufficient privileges', 0),
      databaseError(
        'ORA-06550: line 3, column 5:\nPLS-00201: identifier DBMS_CLOUD_AI must be declared',
        3,
      ),
    ]) {
      const fake = fakePool([error]);
      const failure = await new OracleDriver(fake.pool, { callTimeoutMs: 1000 })
        .runBlock(block, { exec_id: 'E1' })
        .catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(AppError);
      expect(failure).toMatchObject({ code: 'FORBIDDEN' });
      expect((failure as Error).message).toContain('CREATE JOB');
      expect((failure as Error).message).not.toContain('ORA-');
    }
  });
});
