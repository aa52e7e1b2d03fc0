/**
 * What `npm run oracle:check` reports where a database differs from the embedded one, over
 * the embedded driver with the differences put in: a session without CREATE JOB, a RUN_TEAM
 * that does not compile (reported by its PLS- line), history written in local time, and the
 * Select AI shape of USER_AI_AGENTS (which has AGENT_ID too).
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { agentsViewShape, type ViewInfo } from '../../src/db/catalog.js';
import type { Binds, Block, Driver, QueryOptions, Row, Statement } from '../../src/db/driver.js';
import { type EmbeddedDatabase, openEmbeddedDatabase } from '../../src/db/embedded/database.js';
import { OracleDriver } from '../../src/db/oracle/driver.js';
import { runTeamCompiles } from '../../src/db/sql/run-team.js';
import { checkDatabase } from '../../src/oracle-check/check.js';
import { databaseError } from './oracledb-errors.js';

let database: EmbeddedDatabase;
beforeAll(async () => {
  const config = loadConfig({});
  if (config.database.kind !== 'embedded') throw new Error('expected the embedded config');
  database = await openEmbeddedDatabase(config.database);
});
afterAll(() => database.driver.close());

interface Changes {
  readonly rows?: Record<string, Row[]>;
  readonly blockError?: Record<string, Error>;
}

/** The embedded driver, answering some statements and blocks as another database would. */
function differing(changes: Changes): Driver {
  const inner = database.driver;
  return {
    kind: inner.kind,
    query: async (statement: Statement, binds?: Binds, options?: QueryOptions) =>
      changes.rows?.[statement.name] ?? inner.query(statement, binds, options),
    queryWithAgentDetails: (statement, binds, options) =>
      inner.queryWithAgentDetails(statement, binds, options),
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
  const lines: string[] = [];
  await checkDatabase(driver, 'dba', (line) => lines.push(line));
  return lines.join('\n');
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
