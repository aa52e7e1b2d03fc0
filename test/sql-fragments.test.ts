/**
 * SQL fragments that cannot be misused (src/db/sql/fragment.ts, src/db/sql/query.ts): text
 * enters a statement only as the code's own text or a catalog name, values only as binds, and
 * the fragment writes the placeholders both drivers send.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { type Catalog, discoverCatalog, type ViewInfo } from '../src/db/catalog.js';
import type { Driver } from '../src/db/driver.js';
import { numbered } from '../src/db/embedded/database.js';
import type { OpenDatabase } from '../src/db/open.js';
import { type OracleConnection, OracleDriver } from '../src/db/oracle/driver.js';
import {
  type ExecuteAgentCall,
  executeAgentArguments,
  executeAgentBlock,
  type ListedProcedureArgument,
  resolveExecuteAgent,
} from '../src/db/sql/execute-agent.js';
import { discoveredOverload, type Fragment, sql } from '../src/db/sql/fragment.js';
import { inList } from '../src/db/sql/in-lists.js';
import { fetchRows, query, statement } from '../src/db/sql/query.js';
import { registeredStatements } from '../src/oracle-check/statements.js';
import { leaseDatabase } from './support/databases.js';

let database: OpenDatabase;
let embedded: Driver;
let catalog: Catalog;

beforeAll(async () => {
  const config = loadConfig({});
  if (config.database.kind !== 'embedded') throw new Error('expected the embedded config');
  database = await leaseDatabase(config.database);
  embedded = database.driver;
  catalog = await discoverCatalog(embedded, 'dba', 'APP_USER');
});
afterAll(() => database.driver.close());

/** The Oracle driver over a connection that records what it is asked to execute. */
function recordingOracle() {
  const calls: { sql: string; binds: unknown }[] = [];
  const connection: OracleConnection = {
    break: async () => {},
    close: async () => {},
    execute: async <T>(text: string, binds: unknown) => {
      calls.push({ sql: text, binds });
      return { rows: [] as T[] };
    },
  };
  const driver = new OracleDriver(
    { getConnection: async () => connection, close: async () => {}, getStatistics: () => null },
    { callTimeoutMs: 1000 },
  );
  return { driver, calls };
}

describe('text enters a fragment only as the code wrote it or as the catalog names it', () => {
  test('a plain string interpolated into sql`…` is refused, by the type and when it runs', () => {
    const name = "ORDER_SUPPORT_TEAM' OR '1' = '1";
    expect(
      // @ts-expect-error a string is not a Fragment
      () => sql`SELECT * FROM DBA_AI_AGENT_TEAMS WHERE AGENT_TEAM_NAME = '${name}'`,
    ).toThrow(/takes fragments only, not a string: a value goes in as sql\.bind/);
    // @ts-expect-error a number is not a Fragment either
    expect(() => sql`SELECT ${1} FROM DUAL`).toThrow(/not a number/);
    // An object shaped like a fragment is not one: only fragment.ts makes fragments.
    const forged = { binds: {}, noRows: false } as unknown as Fragment;
    expect(() => sql`SELECT 1 FROM ${forged}`).toThrow(/takes fragments only, not a object/);
    // Called as a function, the text is not a template's: refused too.
    const text = ['SELECT 1 FROM DUAL'] as unknown as TemplateStringsArray;
    expect(() => sql(text)).toThrow(/takes fragments only/);
  });

  test('sql.raw takes string literals only; sql.join a literal separator', () => {
    const given: string = 'DESC; DROP TABLE x';
    // @ts-expect-error a string typed `string` is text the code was given, not text it wrote
    sql.raw(given);
    // @ts-expect-error a template with a string hole is not a literal either
    sql.raw(`${given} NULLS LAST`);
    const direction = given === 'ASC' ? 'ASC' : 'DESC';
    expect(statement('x', sql`ORDER BY A ${sql.raw(direction)}`).text).toBe('ORDER BY A DESC');
    // @ts-expect-error the separator is fixed text of the code
    sql.join([sql`A`, sql`B`], given);
    expect(statement('x', sql.join([sql`A`, sql`B`], ' || ')).text).toBe('A || B');
  });

  test('a bind name is a plain name', () => {
    expect(() => sql.bind('x = 1 OR :y', 1)).toThrow('"x = 1 OR :y" is not a bind name');
  });

  test('sql.identifier refuses a view or a column the catalog does not hold', () => {
    const teams = catalog.teams;
    expect(
      statement(
        'x',
        sql`SELECT ${sql.identifier(catalog, teams, 'DESCRIPTION')} FROM ${sql.identifier(catalog, teams)}`,
      ).text,
    ).toBe('SELECT DESCRIPTION FROM DBA_AI_AGENT_TEAMS');
    expect(() => sql.identifier(catalog, teams, 'DESCRIPTION FROM DUAL --')).toThrow(
      'sql.identifier: "DESCRIPTION FROM DUAL --" is not a column of DBA_AI_AGENT_TEAMS in the catalog',
    );
    expect(() => sql.identifier(catalog, teams, 'NO_SUCH_COLUMN')).toThrow(
      /"NO_SUCH_COLUMN" is not a column of DBA_AI_AGENT_TEAMS/,
    );
    const impostor: ViewInfo = { ...teams, name: 'DBA_USERS' };
    expect(() => sql.identifier(catalog, impostor)).toThrow(
      'sql.identifier: "DBA_USERS" is not a view of the catalog',
    );
    // A view the database does not show: no statement over it is sent, but a name stays a name.
    const missing = { ...catalog, teams: { ...teams, columns: null } };
    expect(statement('x', sql.identifier(missing, missing.teams, 'OWNER')).text).toBe('OWNER');
    expect(() => sql.identifier(missing, missing.teams, 'OWNER, PASSWORD')).toThrow(
      /is not a column of DBA_AI_AGENT_TEAMS/,
    );
  });

  test('sql.argument names only an argument ALL_ARGUMENTS listed for the overload', () => {
    /** An ALL_ARGUMENTS row as the dictionary returns it, decoded as start-up decodes it. */
    const listed = (argumentName: string | null, more: Record<string, unknown> = {}) =>
      executeAgentArguments.decode({
        overload: '1',
        position: argumentName === null ? 0 : 1,
        argumentName,
        dataType: 'CLOB',
        inOut: argumentName === null ? 'OUT' : 'IN',
        defaulted: 'N',
        ...more,
      });
    const call = resolveExecuteAgent([
      listed(null),
      listed('AGENT_NAME', { dataType: 'VARCHAR2' }),
      listed('INPUTS', { position: 2 }),
    ]).plain as ExecuteAgentCall;
    expect(executeAgentBlock(call).oracle.text).toBe(
      'BEGIN :agent_output := DBMS_AI_AGENT.EXECUTE_AGENT(AGENT_NAME => :agent_name, INPUTS => :agent_inputs); END;',
    );
    // A name the dictionary did not list for this overload is refused, however plain.
    expect(() => sql.argument(call.listed, 'TRACES')).toThrow(
      'sql.argument: "TRACES" is not an argument of DBMS_AI_AGENT.EXECUTE_AGENT as ALL_ARGUMENTS lists it',
    );
    expect(() => executeAgentBlock({ ...call, inputsArgument: 'INPUTS => NULL, X' })).toThrow(
      /"INPUTS => NULL, X" is not an argument of DBMS_AI_AGENT.EXECUTE_AGENT/,
    );
    // A listed name that would need quoting makes the overload unusable, not a call.
    const quoted = resolveExecuteAgent([
      listed(null),
      listed('AGENT_NAME', { dataType: 'VARCHAR2' }),
      listed('"inputs"', { position: 2 }),
    ]);
    expect(quoted.plain).toBeNull();
    expect(quoted.missing).toContain('argument name "inputs" is not a plain identifier');
  });

  test('an overload is made only from the rows the ALL_ARGUMENTS decoder returned', () => {
    const decoded = ['AGENT_NAME', 'INPUTS'].map((argumentName, i) =>
      executeAgentArguments.decode({
        overload: null,
        position: i + 1,
        argumentName,
        dataType: i === 0 ? 'VARCHAR2' : 'CLOB',
        inOut: 'IN',
        defaulted: 'N',
      }),
    );
    const overload = discoveredOverload('DBMS_AI_AGENT.EXECUTE_AGENT', decoded);
    expect(sql.argument(overload, 'INPUTS')).toBeDefined();
    const refused =
      'the arguments of DBMS_AI_AGENT.EXECUTE_AGENT are the rows ALL_ARGUMENTS returned (argumentsDecoder), not rows written by hand';
    // A row written by hand, or a decoded row copied with another name, lists nothing.
    expect(() =>
      // @ts-expect-error a row written by hand lacks the mark only argumentsDecoder gives
      discoveredOverload('DBMS_AI_AGENT.EXECUTE_AGENT', [{ argumentName: 'AGENT_NAME' }]),
    ).toThrow(refused);
    const [agentName, inputs] = decoded as [ListedProcedureArgument, ListedProcedureArgument];
    expect(() =>
      discoveredOverload('DBMS_AI_AGENT.EXECUTE_AGENT', [
        agentName,
        { ...inputs, argumentName: 'INPUTS => NULL, X' },
      ]),
    ).toThrow(refused);
    // A decoded row cannot be changed in place either.
    expect(() => {
      (decoded[1] as { argumentName: string }).argumentName = 'X';
    }).toThrow(TypeError);
    // And the call is not made from such rows: the overload reads as not usable.
    const handWritten = resolveExecuteAgent(decoded.map((row) => ({ ...row })));
    expect(handWritten.plain).toBeNull();
    expect(handWritten.missing).toContain(refused);
  });
});

describe('the fragment writes the placeholders of both drivers', () => {
  /** One bind used twice and a fragment nested in another, in an IN list and a subquery. */
  const nested = () => {
    const team = sql.bind('team', 'ORDER_SUPPORT_TEAM');
    const states = inList('state', ['SUCCEEDED', 'FAILED']);
    const inner = sql`SELECT h.TEAM_EXEC_ID FROM DBA_AI_AGENT_TEAM_HISTORY h
      WHERE h.TEAM_NAME = ${team} AND h.STATE IN (${states})`;
    return query(
      'test.nested',
      sql`SELECT COUNT(*) AS N, MAX(${team}) AS TEAM FROM DBA_AI_AGENT_TEAM_HISTORY o
        ${sql.where(sql`o.TEAM_EXEC_ID IN (${inner})`, sql`o.TEAM_NAME = ${team}`, sql`o.STATE IN (${states})`)}`,
      (row) => ({ n: Number(row.n), team: row.team }),
    );
  };

  test('Oracle gets :name for every place; the embedded database $n, one number per name', () => {
    const q = nested();
    expect(q.statement.text).toBe(
      'SELECT COUNT(*) AS N, MAX(:team) AS TEAM FROM DBA_AI_AGENT_TEAM_HISTORY o WHERE o.TEAM_EXEC_ID IN (SELECT h.TEAM_EXEC_ID FROM DBA_AI_AGENT_TEAM_HISTORY h WHERE h.TEAM_NAME = :team AND h.STATE IN (:state0, :state1)) AND o.TEAM_NAME = :team AND o.STATE IN (:state0, :state1)',
    );
    expect(q.statement.placeholders).toEqual([
      'team',
      'team',
      'state0',
      'state1',
      'team',
      'state0',
      'state1',
    ]);
    expect(q.binds).toEqual({ team: 'ORDER_SUPPORT_TEAM', state0: 'SUCCEEDED', state1: 'FAILED' });
    expect(numbered(q.statement)).toEqual({
      text: 'SELECT COUNT(*) AS N, MAX($1) AS TEAM FROM DBA_AI_AGENT_TEAM_HISTORY o WHERE o.TEAM_EXEC_ID IN (SELECT h.TEAM_EXEC_ID FROM DBA_AI_AGENT_TEAM_HISTORY h WHERE h.TEAM_NAME = $1 AND h.STATE IN ($2, $3)) AND o.TEAM_NAME = $1 AND o.STATE IN ($2, $3)',
      names: ['team', 'state0', 'state1'],
    });
  });

  test('both drivers run it with its binds: PGlite counts the rows, Oracle receives :name binds', async () => {
    const q = nested();
    const [row] = await fetchRows(embedded, q);
    const expected = await embedded.query(
      statement(
        'test.expected',
        sql`SELECT COUNT(*) AS N FROM DBA_AI_AGENT_TEAM_HISTORY
          WHERE TEAM_NAME = 'ORDER_SUPPORT_TEAM' AND STATE IN ('SUCCEEDED', 'FAILED')`,
      ),
    );
    expect(row).toEqual({ n: Number(expected[0]?.n), team: 'ORDER_SUPPORT_TEAM' });
    expect(row?.n).toBeGreaterThan(0);

    const oracle = recordingOracle();
    await fetchRows(oracle.driver, q);
    expect(oracle.calls).toEqual([{ sql: q.statement.text, binds: q.binds }]);
  });

  test('a `--` or `/* */` comment holding `:x` and a quote is text, not a bind', async () => {
    const q = query(
      'test.comments',
      sql`SELECT /* :x isn't a bind */ ${sql.bind('n', 'seven')} AS N, ':y' AS Y FROM DUAL -- nor :z, o'clock`,
      (row) => row,
    );
    expect(q.statement.placeholders).toEqual(['n']);
    expect(numbered(q.statement).text).toBe(
      "SELECT /* :x isn't a bind */ $1 AS N, ':y' AS Y FROM DUAL -- nor :z, o'clock",
    );
    expect(await fetchRows(embedded, q)).toEqual([{ n: 'seven', y: ':y' }]);
  });

  test('a block leaves its values to the call: placeholders, numbered the same way', async () => {
    const block = statement(
      'test.block',
      sql`SELECT ${sql.placeholder('a')} || ${sql.placeholder('b')} || ${sql.placeholder('a')} AS AB FROM DUAL`,
    );
    expect(block.text).toBe('SELECT :a || :b || :a AS AB FROM DUAL');
    expect(numbered(block).text).toBe('SELECT $1 || $2 || $1 AS AB FROM DUAL');
    expect(await embedded.query(block, { a: 'x', b: 'y' })).toEqual([{ ab: 'xyx' }]);
    await expect(embedded.query(block, { a: 'x' })).rejects.toThrow('missing bind :b');
  });
});

describe('a statement is written once per shape, its values bound anew', () => {
  /** Runs of a team in some states, with or without a start bound: each choice its own text. */
  const runs = (team: string, states: readonly string[], startedAfter?: Date) =>
    query(
      'test.runs',
      sql`SELECT COUNT(*) AS N FROM DBA_AI_AGENT_TEAM_HISTORY h
        ${sql.where(
          sql`h.TEAM_NAME = ${sql.bind('team', team)}`,
          sql`h.STATE IN (${inList('state', states)})`,
          startedAfter ? sql`h.START_DATE >= ${sql.bind('after', startedAfter)}` : undefined,
        )}`,
      (row) => Number(row.n),
    );
  /** The same count, read without a statement of its own: every run, counted here. */
  const counted = async (team: string, states: readonly string[], startedAfter?: Date) => {
    const every = await fetchRows(
      embedded,
      query(
        'test.everyRun',
        sql`SELECT TEAM_NAME, STATE, START_DATE FROM DBA_AI_AGENT_TEAM_HISTORY`,
        (row) => ({
          team: row.teamName,
          state: row.state,
          start: new Date(row.startDate as string),
        }),
      ),
    );
    return every.filter(
      (run) =>
        run.team === team &&
        states.includes(run.state as string) &&
        (!startedAfter || run.start >= startedAfter),
    ).length;
  };

  test('fragments built alike share one statement; each answers with its own values', async () => {
    const first = runs('ORDER_SUPPORT_TEAM', ['SUCCEEDED']);
    const second = runs('INCIDENT_RESPONSE_TEAM', ['FAILED']);
    expect(second.statement).toBe(first.statement);
    expect(second.binds).toEqual({ team: 'INCIDENT_RESPONSE_TEAM', state0: 'FAILED' });
    expect(await fetchRows(embedded, first)).toEqual([
      await counted('ORDER_SUPPORT_TEAM', ['SUCCEEDED']),
    ]);
    expect(await fetchRows(embedded, second)).toEqual([
      await counted('INCIDENT_RESPONSE_TEAM', ['FAILED']),
    ]);
  });

  test('fragments built otherwise get their own text, and a shape seen before its own again', async () => {
    const since = new Date(Date.now() - 30 * 86_400_000);
    const asked: [string, string[], Date | undefined][] = [
      ['ORDER_SUPPORT_TEAM', ['SUCCEEDED'], undefined],
      ['ORDER_SUPPORT_TEAM', ['SUCCEEDED', 'FAILED'], undefined],
      ['ORDER_SUPPORT_TEAM', ['SUCCEEDED'], since],
      ['INCIDENT_RESPONSE_TEAM', ['FAILED', 'SUCCEEDED'], since],
      ['INCIDENT_RESPONSE_TEAM', ['RUNNING'], undefined],
    ];
    const built = asked.map((ask) => runs(...ask));
    expect(new Set(built.map((q) => q.statement.text)).size).toBe(4);
    expect(built[4]?.statement).toBe(built[0]?.statement);
    expect(built[3]?.statement).not.toBe(built[2]?.statement);
    for (const [i, q] of built.entries()) {
      expect(await fetchRows(embedded, q), String(i)).toEqual([
        await counted(...(asked[i] as (typeof asked)[number])),
      ]);
    }
    expect(await counted('ORDER_SUPPORT_TEAM', ['SUCCEEDED'])).toBeGreaterThan(0);
  });

  test('past the most shapes kept, fragments made before and after still write their text', async () => {
    const before = runs('ORDER_SUPPORT_TEAM', ['SUCCEEDED']);
    const item = sql`${sql.bind('n', 'one')} AS N`;
    // More distinct shapes than fragment.ts interns at once (MAX_SHAPES), each one bind.
    for (let i = 0; i < 60_000; i++) sql`SELECT ${sql.bind(`b${i}`, i)} AS N FROM DUAL`;
    const after = runs('INCIDENT_RESPONSE_TEAM', ['FAILED']);
    expect(after.statement.text).toBe(before.statement.text);
    expect(await fetchRows(embedded, after)).toEqual([
      await counted('INCIDENT_RESPONSE_TEAM', ['FAILED']),
    ]);
    const mixed = query(
      'test.mixed',
      sql`SELECT ${item}, ${sql.bind('m', 'two')} AS M FROM DUAL`,
      (row) => row,
    );
    expect(mixed.statement.text).toBe('SELECT :n AS N, :m AS M FROM DUAL');
    expect(await fetchRows(embedded, mixed)).toEqual([{ n: 'one', m: 'two' }]);
  });
});

describe('a driver runs only a statement that statement() built', () => {
  test('an object written by hand is refused: by the type, and by both drivers when it runs', async () => {
    const forged = {
      name: 'test.forged',
      text: 'SELECT 1 AS N FROM DUAL',
      pieces: ["SELECT 1 AS N FROM DUAL WHERE '", "' = 'x'"],
      placeholders: ['x'],
    };
    const oracle = recordingOracle();
    const refused = 'statement "test.forged" was not built by statement() or query()';
    // @ts-expect-error a Statement carries the mark only statement() gives it
    await expect(embedded.query(forged, { x: 'x' })).rejects.toThrow(refused);
    // @ts-expect-error the same for the Oracle driver
    await expect(oracle.driver.query(forged)).rejects.toThrow(refused);
    // @ts-expect-error and for the wrapper that adds DESCRIBE_AGENT
    await expect(oracle.driver.queryWithAgentDetails(forged)).rejects.toThrow(refused);
    expect(oracle.calls).toEqual([]);
    const real = statement('test.real', sql`SELECT ${sql.bind('n', 'seven')} AS N FROM DUAL`);
    expect(await embedded.query(real, { n: 'seven' })).toEqual([{ n: 'seven' }]);
  });

  test('a copy of a built statement with other text is refused by both drivers, and a built one cannot be changed', async () => {
    const real = statement('test.real', sql`SELECT ${sql.bind('n', 'seven')} AS N FROM DUAL`);
    const copy = {
      ...real,
      text: 'SELECT PASSWORD AS N FROM DBA_USERS',
      pieces: ['SELECT PASSWORD AS N FROM DBA_USERS WHERE :n IS NOT NULL'],
      placeholders: [],
    };
    const oracle = recordingOracle();
    const refused = 'statement "test.real" was not built by statement() or query()';
    await expect(embedded.query(copy, { n: 'seven' })).rejects.toThrow(refused);
    await expect(embedded.queryWithAgentDetails(copy, { n: 'seven' })).rejects.toThrow(refused);
    await expect(oracle.driver.query(copy, { n: 'seven' })).rejects.toThrow(refused);
    await expect(oracle.driver.queryWithAgentDetails(copy, { n: 'seven' })).rejects.toThrow(
      refused,
    );
    expect(oracle.calls).toEqual([]);
    expect(() => {
      (real as { text: string }).text = 'SELECT 2 FROM DUAL';
    }).toThrow(TypeError);
    expect(() => {
      (real.pieces as string[])[0] = 'SELECT 2 FROM DUAL WHERE ';
    }).toThrow(TypeError);
    expect(await embedded.query(real, { n: 'seven' })).toEqual([{ n: 'seven' }]);
    await oracle.driver.query(real, { n: 'seven' });
    expect(oracle.calls).toEqual([{ sql: real.text, binds: { n: 'seven' } }]);
  });
});

test('every statement the repositories send: the embedded text is the Oracle text, $n for :name', async () => {
  const user = await discoverCatalog(embedded, 'user', 'APP_USER');
  const entries = registeredStatements([catalog, user]);
  // Hundreds of variants (794 once the planner's statements replaced the per-level ones): a
  // registry that shrank to a handful would let this check pass on next to nothing.
  expect(entries.length).toBeGreaterThan(500);
  for (const { statement: sent } of entries) {
    const { text, names } = numbered(sent);
    const back = text.replace(/\$(\d+)/g, (_, n: string) => `:${names[Number(n) - 1]}`);
    expect(back, sent.name).toBe(sent.text);
    expect(new Set(names), sent.name).toEqual(new Set(sent.placeholders));
  }
});

describe('one bind name given two values', () => {
  test('throws while the statement is built, not when it runs', () => {
    const build = () =>
      query(
        'test.collision',
        sql`SELECT 1 AS ONE FROM DUAL ${sql.where(
          sql`OWNER = ${sql.bind('owner', 'ANALYST')}`,
          sql`TEAM_OWNER = ${sql.bind('owner', 'APP_USER')}`,
        )}`,
        (row) => row,
      );
    expect(build).toThrow(
      'bind :owner is given two different values in one statement: name one of them otherwise',
    );
    // The same value twice is one bind.
    const same = sql`${sql.bind('owner', 'ANALYST')} = ${sql.bind('owner', 'ANALYST')}`;
    expect(statement('x', same).placeholders).toEqual(['owner', 'owner']);
    expect(same.binds).toEqual({ owner: 'ANALYST' });
  });
});
