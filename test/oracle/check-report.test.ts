/**
 * What `npm run oracle:check` reports where a database differs from the embedded one, over
 * the embedded driver with the differences put in: a session without CREATE JOB, a RUN_TEAM
 * that does not compile (reported by its PLS- line), history written in local time, and the
 * Select AI shape of USER_AI_AGENTS (which has AGENT_ID too); and the second pass over real
 * keys, which flags a JSON that does not parse and an own agent DESCRIBE_AGENT answers NULL for.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { agentsViewShape, type ViewInfo } from '../../src/db/catalog.js';
import { discoverDatabase } from '../../src/db/discover.js';
import type { Binds, Block, Driver, QueryOptions, Row, Statement } from '../../src/db/driver.js';
import { type EmbeddedDatabase, openEmbeddedDatabase } from '../../src/db/embedded/database.js';
import { OracleDriver } from '../../src/db/oracle/driver.js';
import { fetchRows } from '../../src/db/sql/query.js';
import { runTeamCompiles } from '../../src/db/sql/run-team.js';
import { AppError } from '../../src/errors.js';
import { checkDatabase } from '../../src/oracle-check/check.js';
import { sampleQueries } from '../../src/oracle-check/statements.js';
import { databaseError } from './oracledb-errors.js';

let database: EmbeddedDatabase;
/** The embedded database's answers (remembering). */
let answers: Driver;
beforeAll(async () => {
  const config = loadConfig({});
  if (config.database.kind !== 'embedded') throw new Error('expected the embedded config');
  database = await openEmbeddedDatabase(config.database);
  answers = remembering(database.driver);
});
afterAll(() => database.driver.close());

/**
 * `inner`, with each query's rows read from it once and handed out again (a copy each time)
 * for the same text, binds and options. Every report below is a whole pass over the registry
 * (some 650 statements, 2-3 s of PGlite's CPU), and nothing here writes to the database, so
 * its answers cannot change between passes: the first pass reads them, the others are the
 * check's own work over the same rows.
 */
function remembering(inner: Driver): Driver {
  const seen = new Map<string, Promise<Row[]>>();
  const recalled =
    (kind: 'query' | 'queryWithAgentDetails') =>
    async (statement: Statement, binds?: Binds, options?: QueryOptions) => {
      const key = JSON.stringify([kind, statement.text, binds ?? {}, options?.maxRows ?? null]);
      let rows = seen.get(key);
      if (!rows) {
        rows = inner[kind](statement, binds, options);
        seen.set(key, rows);
      }
      return structuredClone(await rows);
    };
  return {
    kind: inner.kind,
    query: recalled('query'),
    queryWithAgentDetails: recalled('queryWithAgentDetails'),
    runBlock: (block, binds) => inner.runBlock(block, binds),
    probeAgentDetails: () => inner.probeAgentDetails(),
    columnsOf: (views) => inner.columnsOf(views),
    ping: () => inner.ping(),
    close: async () => {},
  };
}

interface Changes {
  readonly rows?: Record<string, Row[]>;
  readonly blockError?: Record<string, Error>;
}

/** The embedded database's answers, with some statements and blocks answered as another database would. */
function differing(changes: Changes): Driver {
  const inner = answers;
  return {
    kind: inner.kind,
    query: async (statement: Statement, binds?: Binds, options?: QueryOptions) =>
      changes.rows?.[statement.name] ?? inner.query(statement, binds, options),
    queryWithAgentDetails: async (statement, binds, options) =>
      changes.rows?.[statement.name] ?? inner.queryWithAgentDetails(statement, binds, options),
    runBlock: async (block: Block, binds: Binds) => {
      const error = changes.blockError?.[block.name];
      if (error) throw error;
      return inner.runBlock(block, binds);
    },
    probeAgentDetails: () => inner.probeAgentDetails(),
    columnsOf: (views) => inner.columnsOf(views),
    ping: () => inner.ping(),
    close: async () => {},
  };
}

async function report(driver: Driver): Promise<string> {
  return (await checked(driver)).text;
}

async function checked(driver: Driver): Promise<{ code: number; text: string }> {
  const lines: string[] = [];
  const code = await checkDatabase(driver, 'dba', (line) => lines.push(line));
  return { code, text: lines.join('\n') };
}

test('a session without CREATE JOB: the RUN_TEAM hand-off is NO, saying so', async () => {
  const text = await report(
    differing({ rows: { 'runTeam.createJobPrivilege': [{ granted: 0 }] } }),
  );
  expect(text).toMatch(
    /^ {2}RUN_TEAM hand-off \(DBMS_SCHEDULER\) NO .*\(no CREATE JOB privilege in SESSION_PRIVS\)$/m,
  );
});

test('RUN_TEAM that does not compile: NO, with the PLS- line that names it', async () => {
  // What OracleDriver.runBlock raises for ORA-06550 from node-oracledb.
  const compile = databaseError(
    "ORA-06550: line 4, column 17:\nPLS-00201: identifier 'DBMS_CLOUD_AI_AGENT.RUN_TEAM' must be declared\nORA-06550: line 4, column 5:\nPL/SQL: Statement ignored",
  );
  const oracle = new OracleDriver(
    {
      getConnection: async () => ({
        execute: async () => {
          throw compile;
        },
        close: async () => {},
        break: async () => {},
      }),
      close: async () => {},
      getStatistics: () => null,
    },
    { callTimeoutMs: 1000 },
  );
  const raised = (await oracle.runBlock(runTeamCompiles, {}).catch((e: unknown) => e)) as Error;
  const text = await report(differing({ blockError: { 'runTeam.compile': raised } }));
  expect(text).toMatch(
    /^ {2}RUN_TEAM hand-off \(DBMS_SCHEDULER\) NO .*\(ORA-06550: PLS-00201: identifier 'DBMS_CLOUD_AI_AGENT\.RUN_TEAM' must be declared\)$/m,
  );
});

test('a probe block with a syntax error: NO, said to be a fault of the block, never a grant', async () => {
  // PLS-00103 is agent-graph's text, not the database's grants: the driver keeps it as it is
  // (not FORBIDDEN) and the check says so instead of listing privileges to grant.
  const syntax = databaseError(
    'ORA-06550: line 3, column 9:\nPLS-00103: Encountered the symbol "END" when expecting one of the following:',
  );
  const oracle = new OracleDriver(
    {
      getConnection: async () => ({
        execute: async () => {
          throw syntax;
        },
        close: async () => {},
        break: async () => {},
      }),
      close: async () => {},
      getStatistics: () => null,
    },
    { callTimeoutMs: 1000 },
  );
  const raised = (await oracle.runBlock(runTeamCompiles, {}).catch((e: unknown) => e)) as Error;
  expect(raised).not.toBeInstanceOf(AppError);
  const text = await report(differing({ blockError: { 'runTeam.compile': raised } }));
  const line = text.split('\n').find((l) => l.includes('RUN_TEAM hand-off')) ?? '';
  expect(line).toMatch(
    / NO +its block does not compile: a fault in agent-graph's PL\/SQL, not a missing grant/,
  );
  expect(line).toContain('(ORA-06550: PLS-00103: Encountered the symbol "END"');
  expect(line).not.toContain('CREATE JOB');
});

test('history written in local time, east of UTC: the newest START_DATE is flagged as not UTC', async () => {
  const now = new Date('2026-12-01T10:00:00Z');
  const zones = (newest: string) => ({
    'session.timeZone': [
      { dbTimeZone: '+00:00', serverOffset: '+02:00', nowUtc: now, newestStart: new Date(newest) },
    ],
  });
  const local = await report(differing({ rows: zones('2026-12-01T11:58:00Z') }));
  expect(local).toContain(
    'time zone        session +00:00, DBTIMEZONE +00:00, SYSTIMESTAMP +02:00',
  );
  expect(local).toMatch(
    /^newest run {7}START_DATE 2026-12-01T11:58:00\.000Z, 2\.0 h after SYS_EXTRACT_UTC\(SYSTIMESTAMP\): NOT UTC/m,
  );
  const utc = await report(differing({ rows: zones('2026-12-01T09:58:00Z') }));
  expect(utc).toMatch(/^newest run {7}START_DATE .*: plausible as UTC$/m);
});

test('USER_AI_AGENTS shapes are told apart by CREATE_TIME/INPUTS and CREATED/STATUS, not AGENT_ID', () => {
  const view = (...columns: string[]): ViewInfo => ({
    name: 'USER_AI_AGENTS',
    columns: new Set(columns),
    grant: '',
  });
  expect(agentsViewShape(view('AGENT_ID', 'AGENT_NAME', 'CREATE_TIME', 'INPUTS', 'OUTPUTS'))).toBe(
    'agentSpec',
  );
  expect(
    agentsViewShape(
      view('AGENT_ID', 'AGENT_NAME', 'DESCRIPTION', 'CREATED', 'LAST_MODIFIED', 'STATUS'),
    ),
  ).toBe('selectAi');
  expect(agentsViewShape(view('AGENT_NAME'))).toBe('unknown');
});

const SECOND_PASS_END = /^second pass: \d+ statements, \d+ ok, (\d+) flagged, (\d+) failed/m;

test('second pass: a JSON array that does not parse is flagged, by column, and fails the check', async () => {
  // What an Oracle JSON_ARRAYAGG cut short would send: text that is not JSON.
  const { code, text } = await checked(
    differing({ rows: { 'taskRuns.byRuns': [{ rowsJson: '[["RUN_1", 1, "Summarize' }] } }),
  );
  expect(text).toMatch(
    /^ {2}taskRuns\.byRuns +1 +FLAGGED: ROWS_JSON does not parse as JSON +\d+$/m,
  );
  expect(text).toMatch(/^ {2}toolCalls\.byRuns +[1-9]\d* +ok +\d+$/m);
  expect(SECOND_PASS_END.exec(text)?.slice(1)).toEqual(['1', '0']);
  expect(text).not.toContain('Summarize');
  expect(code).toBe(1);
});

/** The embedded database's rows, with taskRuns.byRuns' JSON list changed by `change`. */
function tasksListChanged(change: (list: unknown[][]) => void): Driver {
  const base = differing({});
  return {
    ...base,
    query: async (statement, binds, options) => {
      const rows = await base.query(statement, binds, options);
      if (statement.name !== 'taskRuns.byRuns') return rows;
      return rows.map((row) => {
        const sent = row.rowsJson;
        const list = (typeof sent === 'string' ? JSON.parse(sent) : sent) as unknown[][];
        change(list);
        return { ...row, rowsJson: JSON.stringify(list) };
      });
    },
  };
}

// taskRuns.byRuns reads every column: the count, then TEAM_EXEC_ID, …, CONVERSATION_ID (7),
// …, RESULT (13), in src/db/sql/team-history.ts's order.
const CONVERSATION_ID = 7;
const RESULT = 13;

test('second pass: a list whose columns were sorted apart is flagged by what disagrees, no value shown', async () => {
  const { code, text } = await checked(
    tasksListChanged((list) => {
      list[CONVERSATION_ID]?.reverse();
    }),
  );
  expect(text).toMatch(
    /^ {2}taskRuns\.byRuns +[1-9]\d* +FLAGGED: \d+ tasks whose CONVERSATION_ID is not their conversation parameters’ \(columns misaligned\) +\d+$/m,
  );
  expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
  expect(code).toBe(1);
});

test('second pass: a column one value short does not decode, and fails the check', async () => {
  const { code, text } = await checked(
    tasksListChanged((list) => {
      list[RESULT]?.pop();
    }),
  );
  expect(text).toMatch(
    /^ {2}taskRuns\.byRuns +1 +FLAGGED: rows do not decode \(MisalignedList\) +\d+$/m,
  );
  expect(code).toBe(1);
});

test('second pass: the demo’s retried tasks are a note, and the lists are otherwise whole', async () => {
  const { code, text } = await checked(differing({}));
  expect(text).toMatch(/^ {2}history\.runsOfTeams +1 +ok( \(.*\))? +\d+$/m);
  expect(text).not.toMatch(/FLAGGED/);
  expect(code).toBe(0);
});

test('second pass: an own agent DESCRIBE_AGENT answers NULL for is flagged; a JSON without a description is not', async () => {
  const { catalog } = await discoverDatabase(database.driver, 'dba');
  const agents = await fetchRows(database.driver, sampleQueries(catalog).agents);
  const own = agents.filter(({ item }) => item.owner === catalog.sessionUser);
  expect(own.length).toBeGreaterThan(1);
  // The rows as the driver sends them: the first own agent described, the others not.
  const sent = own.map(({ item }, i) => ({
    agentName: item.name,
    owner: item.owner,
    agentDetails: i === 0 ? JSON.stringify({ name: item.name }) : null,
  }));
  const { code, text } = await checked(differing({ rows: { 'agents.byNames': sent } }));
  expect(text).toMatch(
    new RegExp(
      `^ {2}agents\\.byNames +${own.length} +FLAGGED: ${own.length - 1} own agents with a null description: DESCRIBE_AGENT answered NULL +\\d+$`,
      'm',
    ),
  );
  expect(code).toBe(1);
  // The demo data's own ORDER_REQUEST_FLOW has a JSON without a description: a note, exit 0.
  const real = await checked(answers);
  expect(real.text).toMatch(
    /^ {2}agents\.byNames +5 +ok \(1 own agents without a description in their JSON\) +\d+$/m,
  );
  expect(SECOND_PASS_END.exec(real.text)?.slice(1)).toEqual(['0', '0']);
  expect(real.code).toBe(0);
});

test('second pass: counts rows and never prints one of the keys it read', async () => {
  const { catalog } = await discoverDatabase(database.driver, 'dba');
  const pages = sampleQueries(catalog);
  const teams = await fetchRows(database.driver, pages.teams);
  const [runPage] = await fetchRows(database.driver, pages.runs);
  const agents = await fetchRows(database.driver, pages.agents);
  const keys = [
    ...teams.map(({ item }) => item.name),
    ...(runPage?.rows ?? []).map((run) => run.node.execId),
    ...agents.map(({ item }) => item.name),
  ];
  expect(keys).toHaveLength(15);
  const text = await report(answers);
  expect(text).toMatch(/^ {2}keys +5 teams, 5 runs, 5 agents \(3 own\)$/m);
  expect(text).toMatch(/^ {2}history\.runsOfTeams +[1-9]\d* +ok( \(.*\))? +\d+$/m);
  for (const key of keys) expect(text).not.toContain(key);
});
