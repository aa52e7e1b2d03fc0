import { describe, expect, test } from 'vitest';
import { mapQueryError, startupError } from '../../src/db/oracle/errors.js';
import { AppError, StartupError } from '../../src/errors.js';
import { databaseError, njsError } from './oracledb-errors.js';

const AGENTS_SQL =
  'SELECT AGENT_ID AS AGENT_ID, OWNER AS OWNER, AGENT_NAME FROM DBA_AI_AGENTS ORDER BY OWNER, AGENT_NAME';
const target = { user: 'AGENTGRAPH', target: '127.0.0.1:1/none' };

function mapped(error: unknown, sql = AGENTS_SQL): AppError {
  const result = mapQueryError(error, sql);
  expect(result).toBeInstanceOf(AppError);
  return result as AppError;
}

/** What a client may see: a view name and a grant, never driver text or SQL. */
function expectClean(error: AppError) {
  expect(error.message).not.toMatch(/ORA-|NJS-|ECONN|\bFROM\b/);
}

describe('mapQueryError', () => {
  test('ORA-00942 is FORBIDDEN, naming the view at the error offset and its grant', () => {
    const error = mapped(
      databaseError('ORA-00942: table or view does not exist', AGENTS_SQL.indexOf('DBA_AI_AGENTS')),
    );
    expect(error.code).toBe('FORBIDDEN');
    expect(error.message).toBe(
      'DBA_AI_AGENTS is missing or not granted to the agent-graph database user (grant SELECT ON DBA_AI_AGENTS (or SELECT_CATALOG_ROLE))',
    );
    expect(error.cause).toBeInstanceOf(Error);
    expectClean(error);
  });

  test('ORA-00904 (a view without a column it had: a release renamed it) is FORBIDDEN naming the column, not INTERNAL', () => {
    const error = mapped(
      databaseError('ORA-00904: "AGENT_ID": invalid identifier', AGENTS_SQL.indexOf('AGENT_ID')),
    );
    expect(error.code).toBe('FORBIDDEN');
    expect(error.message).toBe('DBA_AI_AGENTS has no column AGENT_ID in this database release');
    expectClean(error);
    const qualified = mapped(
      databaseError('ORA-00904: "H"."TEAM_INSTANCE_ID": invalid identifier'),
    );
    expect(qualified.message).toBe(
      'DBA_AI_AGENTS has no column TEAM_INSTANCE_ID in this database release',
    );
  });

  test('ORA-00942 names a V$ view with the V_$ grant; 23ai message quoting the name', () => {
    const sql =
      'SELECT COUNT(*) AS EXECUTION_COUNT FROM GV$AGENT_EXEC_STAT g JOIN V$AGENT_EXEC_STAT v ON 1 = 1';
    const error = mapped(
      databaseError('ORA-00942: table or view "SYS"."V$AGENT_EXEC_STAT" does not exist'),
      sql,
    );
    expect(error.code).toBe('FORBIDDEN');
    expect(error.message).toContain('V$AGENT_EXEC_STAT is missing or not granted');
    expect(error.message).toContain('grant SELECT ON V_$AGENT_EXEC_STAT');
    expectClean(error);
  });

  test('an offset inside the name still finds it', () => {
    const sql = 'SELECT 1 FROM DUAL d JOIN USER_AI_AGENTS a ON 1 = 1 JOIN DBA_AI_AGENTS b ON 1 = 1';
    const error = mapped(
      databaseError('ORA-00942: table or view does not exist', sql.indexOf('USER_AI') + 3),
      sql,
    );
    expect(error.message).toMatch(/^USER_AI_AGENTS is missing/);
  });

  test('ORA-01031 is FORBIDDEN; a statement reading one view names it without an offset', () => {
    const error = mapped(databaseError('ORA-01031: insufficient privileges'));
    expect(error.code).toBe('FORBIDDEN');
    expect(error.message).toMatch(/^DBA_AI_AGENTS is missing or not granted/);
  });

  test('when the view cannot be told, FORBIDDEN still says what to check', () => {
    const sql = 'SELECT 1 FROM DBA_AI_AGENTS a JOIN DBA_AI_AGENT_TEAMS t ON 1 = 1';
    const error = mapped(databaseError('ORA-00942: table or view does not exist'), sql);
    expect(error.code).toBe('FORBIDDEN');
    expect(error.message).toBe(
      'a view that agent-graph reads is missing or not granted to its database user',
    );
  });

  test.each([
    ['NJS-500', () => njsError(500)],
    ['NJS-501', () => njsError(501, 'db.example.com', 1521, 'abc', 'read ECONNRESET')],
    ['NJS-503', () => njsError(503, '127.0.0.1', 1, 'abc', 'connect ECONNREFUSED 127.0.0.1:1')],
    ['NJS-511', () => njsError(511, 'db.example.com', 1521, 'abc', 'refused')],
    [
      'ORA-03113 (turned into NJS-500 by the driver)',
      () => databaseError('ORA-03113: end-of-file on communication channel'),
    ],
    [
      'ORA-01017 while serving (a pool reconnect after a password change)',
      () => databaseError('ORA-01017: invalid credential or not authorized; logon denied'),
    ],
    [
      'a bare socket error',
      () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
    ],
  ])('%s is UPSTREAM_UNAVAILABLE', (_, make) => {
    const error = mapped(make());
    expect(error.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(error.message).toBe('the database is unavailable');
    expectClean(error);
  });

  test.each([
    ['NJS-040 (pool queue timeout)', () => njsError(40, 5000), /no database connection/],
    ['NJS-123 (call timeout)', () => njsError(123, 10000), /did not answer in time/],
    ['NJS-076 (pool queue full)', () => njsError(76, 500), /too many requests/],
  ])('%s is TIMEOUT', (_, make, message) => {
    const error = mapped(make());
    expect(error.code).toBe('TIMEOUT');
    expect(error.message).toMatch(message);
    expectClean(error);
  });

  test('anything else is returned unchanged, for the GraphQL layer to mask as INTERNAL', () => {
    const invalidNumber = databaseError('ORA-01722: invalid number', 7);
    expect(mapQueryError(invalidNumber, AGENTS_SQL)).toBe(invalidNumber);
    const plain = new Error('boom');
    expect(mapQueryError(plain, AGENTS_SQL)).toBe(plain);
  });

  test('an AppError passes through', () => {
    const error = new AppError('FORBIDDEN', 'already mapped');
    expect(mapQueryError(error, AGENTS_SQL)).toBe(error);
  });
});

describe('startupError', () => {
  test('ORA-01017 says the credentials of the user are invalid', () => {
    const error = startupError(
      databaseError('ORA-01017: invalid credential or not authorized; logon denied'),
      target,
    );
    expect(error).toBeInstanceOf(StartupError);
    expect(error.message).toBe(
      'invalid Oracle credentials for user AGENTGRAPH (check ORACLE_USER and ORACLE_PASSWORD)',
    );
  });

  test('a locked account and an expired password are named', () => {
    expect(startupError(databaseError('ORA-28000: The account is locked.'), target).message).toBe(
      'the Oracle account AGENTGRAPH is locked',
    );
    expect(startupError(databaseError('ORA-28001: the password has expired'), target).message).toBe(
      'the password of Oracle user AGENTGRAPH has expired',
    );
  });

  test('a refused connection is one line naming the target and the cause', () => {
    const error = startupError(
      njsError(503, '127.0.0.1', 1, 'Xy12==', 'connect ECONNREFUSED 127.0.0.1:1'),
      target,
    );
    expect(error.message).toBe(
      'cannot connect to Oracle at 127.0.0.1:1/none: NJS-503: connection to host 127.0.0.1 port 1 could not be established (connect ECONNREFUSED 127.0.0.1:1)',
    );
  });

  test('a pool queue timeout while connecting means no answer in time', () => {
    expect(startupError(njsError(40, 5000), target).message).toBe(
      'no answer from Oracle at 127.0.0.1:1/none within the pool queue timeout (DB_QUEUE_TIMEOUT_MS)',
    );
  });

  test('an AppError from the driver is unwrapped to its cause', () => {
    const cause = njsError(511, 'h', 1521, 'id', 'refused');
    const error = startupError(new AppError('UPSTREAM_UNAVAILABLE', 'x', { cause }), target);
    expect(error.message).toMatch(/^cannot connect to Oracle at 127\.0\.0\.1:1\/none: NJS-511/);
    expect(error.cause).toBe(cause);
  });

  test('other failures keep the driver text, without help links', () => {
    const error = startupError(
      databaseError('ORA-12506: TNS:listener rejected connection based on service ACL filtering'),
      target,
    );
    expect(error.message).toBe(
      'cannot use Oracle at 127.0.0.1:1/none: ORA-12506: TNS:listener rejected connection based on service ACL filtering',
    );
  });
});
