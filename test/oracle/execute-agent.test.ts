/**
 * DBMS_AI_AGENT.EXECUTE_AGENT on Oracle, through the real OracleDriver over a fake pool: the
 * call is built from what ALL_ARGUMENTS lists (two different shapes), binds every value, reads
 * the CLOB outputs, and is broken on the database when its time runs out or its client leaves.
 */
import oracledb from 'oracledb';
import { describe, expect, test } from 'vitest';
import type { Catalog } from '../../src/db/catalog.js';
import { CallInterrupted } from '../../src/db/driver.js';
import {
  type OracleConnection,
  OracleDriver,
  type OraclePool,
} from '../../src/db/oracle/driver.js';
import {
  decodeExecuteAgent,
  type ExecuteAgentCall,
  executeAgentArguments,
  executeAgentBinds,
  executeAgentBlock,
  resolveExecuteAgent,
} from '../../src/db/sql/execute-agent.js';
import { fetchRows } from '../../src/db/sql/query.js';
import { AppError } from '../../src/errors.js';
import { ANONYMOUS_ADMIN } from '../../src/model/viewer.js';
import { AgentExecutions } from '../../src/repositories/agent-executions.js';
import { AgentRepository } from '../../src/repositories/agents.js';
import { IdempotentCalls } from '../../src/repositories/idempotent-calls.js';
import { databaseError } from './oracledb-errors.js';

interface Call {
  readonly sql: string;
  readonly binds: Record<string, unknown>;
  readonly callTimeout: number | undefined;
  /** The execute's autoCommit: true commits in the same round trip if it succeeds. */
  readonly autoCommit: boolean | undefined;
}

type Answer = (call: Call, connection: { broken: Promise<void> }) => Promise<unknown>;

/** A pool whose connections answer each execute with the next scripted answer. */
function fakePool(script: Answer[]) {
  const calls: Call[] = [];
  const state = { breaks: 0, released: 0 };
  const pool: OraclePool = {
    async getConnection() {
      let broke: () => void = () => {};
      const broken = new Promise<void>((resolve) => {
        broke = resolve;
      });
      const connection: OracleConnection = {
        callTimeout: undefined,
        async execute<T>(
          sql: string,
          binds: oracledb.BindParameters,
          options?: oracledb.ExecuteOptions,
        ) {
          const call = {
            sql,
            binds: binds as Record<string, unknown>,
            callTimeout: connection.callTimeout,
            autoCommit: options?.autoCommit,
          };
          calls.push(call);
          const next = script.shift();
          if (!next) throw new Error('unscripted execute');
          return (await next(call, { broken })) as oracledb.Result<T>;
        },
        async close() {
          state.released++;
        },
        async break() {
          state.breaks++;
          broke();
        },
      };
      return connection;
    },
    close: async () => undefined,
    getStatistics: () => null,
  };
  return { pool, calls, state };
}

const rows = (value: Record<string, unknown>[]) => async () => ({ rows: value });

/** A temporary CLOB as node-oracledb Thin hands an OUT bind back. */
function lob(text: string) {
  const lobState = { destroyed: false };
  return {
    lob: {
      getData: async () => text,
      destroy: () => {
        lobState.destroyed = true;
      },
    },
    lobState,
  };
}

const arg = (
  OVERLOAD: string | null,
  POSITION: number,
  ARGUMENT_NAME: string | null,
  DATA_TYPE: string,
  IN_OUT: string,
  DEFAULTED = 'N',
) => ({ OVERLOAD, POSITION, ARGUMENT_NAME, DATA_TYPE, IN_OUT, DEFAULTED });

/** Dictionary rows as the ALL_ARGUMENTS statement returns them: only those make an overload. */
const listed = (dictionary: ReturnType<typeof arg>[]) =>
  dictionary.map((a) =>
    executeAgentArguments.decode({
      overload: a.OVERLOAD,
      position: a.POSITION,
      argumentName: a.ARGUMENT_NAME,
      dataType: a.DATA_TYPE,
      inOut: a.IN_OUT,
      defaulted: a.DEFAULTED,
    }),
  );

/** The reference's shape (unconfirmed): a function, and an overload that also returns TRACES. */
const REFERENCE_SHAPE = [
  arg('1', 0, null, 'CLOB', 'OUT'),
  arg('1', 1, 'AGENT_NAME', 'VARCHAR2', 'IN'),
  arg('1', 2, 'INPUTS', 'CLOB', 'IN'),
  arg('2', 0, null, 'CLOB', 'OUT'),
  arg('2', 1, 'AGENT_NAME', 'VARCHAR2', 'IN'),
  arg('2', 2, 'INPUTS', 'CLOB', 'IN'),
  arg('2', 3, 'TRACES', 'CLOB', 'OUT'),
];

/** Another release's shape: one procedure, other names, an optional argument left out. */
const PROCEDURE_SHAPE = [
  arg(null, 1, 'P_AGENT_NAME', 'VARCHAR2', 'IN'),
  arg(null, 2, 'P_INPUT_JSON', 'CLOB', 'IN'),
  arg(null, 3, 'P_OPTIONS', 'CLOB', 'IN', 'Y'),
  arg(null, 4, 'P_RESULT', 'CLOB', 'OUT'),
  arg(null, 5, 'P_TRACE', 'CLOB', 'OUT'),
];

const INPUTS = '[{"name":"order_id","value":"x\'); DROP TABLE t; --"}]';

async function discover(shape: Record<string, unknown>[]) {
  const fake = fakePool([rows(shape)]);
  const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1000 });
  const procedure = resolveExecuteAgent(await fetchRows(driver, executeAgentArguments));
  return { procedure, lookup: fake.calls[0] };
}

describe('EXECUTE_AGENT on Oracle: the call built from ALL_ARGUMENTS', () => {
  test('the look-up reads the synonym’s package, top-level arguments only, with binds', async () => {
    const { lookup } = await discover(REFERENCE_SHAPE);
    expect(lookup?.sql).toContain('FROM ALL_ARGUMENTS a');
    expect(lookup?.sql).toContain('a.DATA_LEVEL = 0');
    expect(lookup?.binds).toEqual({ package_name: 'DBMS_AI_AGENT', object_name: 'EXECUTE_AGENT' });
  });

  test('the reference’s function overloads: RETURN into :agent_output, TRACES by name', async () => {
    const { procedure } = await discover(REFERENCE_SHAPE);
    expect(procedure.missing).toBeNull();
    expect(procedure.signatures).toEqual([
      '(AGENT_NAME IN VARCHAR2, INPUTS IN CLOB) RETURN CLOB',
      '(AGENT_NAME IN VARCHAR2, INPUTS IN CLOB, TRACES OUT CLOB) RETURN CLOB',
    ]);
    expect(executeAgentBlock(procedure.plain as never).oracle.text).toBe(
      'BEGIN :agent_output := DBMS_AI_AGENT.EXECUTE_AGENT(AGENT_NAME => :agent_name, INPUTS => :agent_inputs); END;',
    );
    const traced = executeAgentBlock(procedure.traced as never);
    expect(traced.oracle.text).toBe(
      'BEGIN :agent_output := DBMS_AI_AGENT.EXECUTE_AGENT(AGENT_NAME => :agent_name, INPUTS => :agent_inputs, TRACES => :agent_traces); END;',
    );

    const output = lob('{"answer":"Tuesday"}');
    const traces = lob('{"root":{"component_type":"Flow","duration_ms":12}}');
    const fake = fakePool([
      async () => ({ outBinds: { agent_output: output.lob, agent_traces: traces.lob } }),
    ]);
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1000 });
    const result = decodeExecuteAgent(
      await driver.runBlock(traced, executeAgentBinds('ORDER_ASSISTANT', INPUTS), {
        timeoutMs: 60_000,
      }),
    );
    expect(result).toEqual({
      output: '{"answer":"Tuesday"}',
      traces: '{"root":{"component_type":"Flow","duration_ms":12}}',
    });
    expect([output.lobState.destroyed, traces.lobState.destroyed]).toEqual([true, true]);
    const [call] = fake.calls;
    // Values only as binds; the outputs as CLOB OUT binds, read whole.
    expect(call?.sql).not.toContain('ORDER_ASSISTANT');
    expect(call?.sql).not.toContain('DROP TABLE');
    // The inputs bound as the CLOB the overload declares, so PL/SQL picks that overload.
    expect(call?.binds).toEqual({
      agent_name: 'ORDER_ASSISTANT',
      agent_inputs: { dir: oracledb.BIND_IN, type: oracledb.DB_TYPE_CLOB, val: INPUTS },
      agent_output: { dir: oracledb.BIND_OUT, type: oracledb.DB_TYPE_CLOB },
      agent_traces: { dir: oracledb.BIND_OUT, type: oracledb.DB_TYPE_CLOB },
    });
    // What the agent's tools wrote is committed with the call's success, in its round trip.
    expect(call?.autoCommit).toBe(true);
    // The interrupting timer ends it; the driver's call timeout stays behind as a backstop.
    expect(call?.callTimeout).toBe(65_000);
  });

  test('a procedure with other names: OUT arguments by name, the defaulted one left out', async () => {
    const { procedure } = await discover(PROCEDURE_SHAPE);
    expect(procedure.missing).toBeNull();
    expect(procedure.plain).toEqual(procedure.traced);
    const block = executeAgentBlock(procedure.traced as never);
    expect(block.oracle.text).toBe(
      'BEGIN DBMS_AI_AGENT.EXECUTE_AGENT(P_AGENT_NAME => :agent_name, P_INPUT_JSON => :agent_inputs, P_RESULT => :agent_output, P_TRACE => :agent_traces); END;',
    );
    const fake = fakePool([
      async () => ({ outBinds: { agent_output: 'plain text', agent_traces: null } }),
    ]);
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1000 });
    expect(decodeExecuteAgent(await driver.runBlock(block, executeAgentBinds('A', '[]')))).toEqual({
      output: 'plain text',
      traces: null,
    });
  });

  test('the look-up reads the package the call reaches: the current schema’s first, then synonyms', async () => {
    const { lookup } = await discover(REFERENCE_SHAPE);
    const text = lookup?.sql ?? '';
    const schema = text.indexOf("o.OWNER = SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA')");
    const privateSynonym = text.indexOf("s.OWNER = SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA')");
    const publicSynonym = text.indexOf("s.OWNER = 'PUBLIC'");
    expect(schema).toBeGreaterThan(0);
    expect(privateSynonym).toBeGreaterThan(schema);
    expect(publicSynonym).toBeGreaterThan(privateSynonym);
    expect(text).toMatch(/'SYS'\) ORDER BY a\.OVERLOAD, a\.POSITION$/);
  });

  test('overloads that differ only in the INPUTS type: the bind carries the chosen one’s type', async () => {
    // Named notation alone cannot choose between INPUTS CLOB and INPUTS JSON (PLS-00307).
    const { procedure } = await discover([
      arg('1', 0, null, 'CLOB', 'OUT'),
      arg('1', 1, 'AGENT_NAME', 'VARCHAR2', 'IN'),
      arg('1', 2, 'INPUTS', 'JSON', 'IN'),
      arg('2', 0, null, 'CLOB', 'OUT'),
      arg('2', 1, 'AGENT_NAME', 'VARCHAR2', 'IN'),
      arg('2', 2, 'INPUTS', 'CLOB', 'IN'),
    ]);
    // JSON is recognised as an inputs type: both overloads are usable; the first is called.
    expect(procedure.missing).toBeNull();
    expect(procedure.signatures).toEqual([
      '(AGENT_NAME IN VARCHAR2, INPUTS IN JSON) RETURN CLOB',
      '(AGENT_NAME IN VARCHAR2, INPUTS IN CLOB) RETURN CLOB',
    ]);
    const block = executeAgentBlock(procedure.plain as ExecuteAgentCall);
    const fake = fakePool([async () => ({ outBinds: { agent_output: null } })]);
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1000 });
    await driver.runBlock(block, executeAgentBinds('A', INPUTS));
    expect(fake.calls[0]?.binds.agent_inputs).toEqual({
      dir: oracledb.BIND_IN,
      type: oracledb.DB_TYPE_JSON,
      val: JSON.parse(INPUTS),
    });
    // A VARCHAR2 formal takes the string as it is.
    const { procedure: text } = await discover([
      arg(null, 0, null, 'CLOB', 'OUT'),
      arg(null, 1, 'AGENT_NAME', 'VARCHAR2', 'IN'),
      arg(null, 2, 'INPUTS', 'VARCHAR2', 'IN'),
    ]);
    const plain = fakePool([async () => ({ outBinds: { agent_output: null } })]);
    await new OracleDriver(plain.pool, { callTimeoutMs: 1000 }).runBlock(
      executeAgentBlock(text.plain as ExecuteAgentCall),
      executeAgentBinds('A', INPUTS),
    );
    expect(plain.calls[0]?.binds.agent_inputs).toBe(INPUTS);
  });

  test('only EXECUTE_AGENT commits, and only with its success: a broken call commits nothing', async () => {
    const { procedure } = await discover(REFERENCE_SHAPE);
    const block = executeAgentBlock(procedure.plain as ExecuteAgentCall);
    expect(block.commits).toBe(true);
    // The dictionary look-up (a query) does not commit.
    const lookup = fakePool([rows(REFERENCE_SHAPE)]);
    await fetchRows(new OracleDriver(lookup.pool, { callTimeoutMs: 1000 }), executeAgentArguments);
    expect(lookup.calls[0]?.autoCommit).toBeUndefined();
    // autoCommit commits only when the execute succeeds: one that fails leaves the work to
    // the rollback of the connection's release (node-oracledb), and nothing else commits it.
    const failing = fakePool([
      async () => {
        throw databaseError('ORA-20001: the agent failed', 0);
      },
    ]);
    const error = await new OracleDriver(failing.pool, { callTimeoutMs: 1000 })
      .runBlock(block, executeAgentBinds('A', '[]'))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(failing.calls.map((call) => call.autoCommit)).toEqual([true]);
    expect(failing.state.released).toBe(1);
  });

  test('nothing usable: what is missing, said once, and executeAgent FORBIDDEN before any statement', async () => {
    const none = resolveExecuteAgent([]);
    expect(none.missing).toMatch(/not in ALL_ARGUMENTS.*EXECUTE ON DBMS_AI_AGENT/);
    const { procedure } = await discover([
      arg(null, 1, 'AGENT_NAME', 'VARCHAR2', 'IN'),
      arg(null, 2, 'SPEC', 'CLOB', 'IN'),
      arg(null, 3, 'RESULT', 'CLOB', 'OUT'),
    ]);
    expect(procedure.plain).toBeNull();
    expect(procedure.missing).toBe(
      'no overload of DBMS_AI_AGENT.EXECUTE_AGENT can be called with an agent name and the inputs JSON: (AGENT_NAME IN VARCHAR2, SPEC IN CLOB, RESULT OUT CLOB): no IN CLOB or JSON argument for the inputs (…INPUT…)',
    );
    const withoutDefault = resolveExecuteAgent(
      listed([...REFERENCE_SHAPE.slice(0, 3), arg('1', 3, 'MODEL', 'VARCHAR2', 'IN')]),
    );
    expect(withoutDefault.missing).toContain('argument MODEL (IN) has no default');

    const fake = fakePool([]);
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1000 });
    // The USER_AI_AGENTS part of a catalog is all the agent statements need.
    const catalog = {
      scope: 'user',
      sessionUser: 'APP_USER',
      agents: {
        name: 'USER_AI_AGENTS',
        columns: new Set(['AGENT_ID', 'AGENT_NAME', 'CREATE_TIME', 'INPUTS', 'OUTPUTS']),
        grant: 'EXECUTE ON DBMS_AI_AGENT',
      },
    } as unknown as Catalog;
    const executions = new AgentExecutions(
      driver,
      catalog,
      ANONYMOUS_ADMIN,
      new AgentRepository(driver, catalog, ANONYMOUS_ADMIN),
      {
        authenticated: true,
        audit: () => {},
        executeAgent: procedure,
        executeAgentTimeoutMs: 1000,
        runTeamCalls: new IdempotentCalls(),
      },
    );
    const error = await executions.execute('ORDER_ASSISTANT', [], false, undefined).catch((e) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'FORBIDDEN' });
    expect((error as Error).message).toContain('no IN CLOB or JSON argument for the inputs');
    expect(fake.calls).toEqual([]);
  });
});

describe('EXECUTE_AGENT on Oracle: interrupted calls are broken on the database', () => {
  const block = executeAgentBlock(
    resolveExecuteAgent(listed(REFERENCE_SHAPE.slice(0, 3))).plain as ExecuteAgentCall,
  );
  /** An execute that runs until the connection is broken, then fails as Oracle does. */
  const untilBroken: Answer = async (_call, { broken }) => {
    await broken;
    throw databaseError('ORA-01013: user requested cancel of current operation', 0);
  };

  test('the client going away: connection.break(), CallInterrupted(cancelled), released', async () => {
    const fake = fakePool([untilBroken]);
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1000 });
    const client = new AbortController();
    const running = driver.runBlock(block, executeAgentBinds('A', '[]'), { signal: client.signal });
    await Promise.resolve();
    await new Promise(setImmediate);
    client.abort();
    const error = await running.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CallInterrupted);
    expect(error).toMatchObject({ reason: 'cancelled' });
    expect(fake.state).toEqual({ breaks: 1, released: 1 });
  });

  test('EXECUTE_AGENT_TIMEOUT_MS passing: the same break, as a timeout', async () => {
    const fake = fakePool([untilBroken]);
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1000 });
    const error = await driver
      .runBlock(block, executeAgentBinds('A', '[]'), { timeoutMs: 20 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'timeout', timeoutMs: 20 });
    expect(fake.state).toEqual({ breaks: 1, released: 1 });
  });

  test('a client already gone: no connection is taken, nothing runs', async () => {
    const fake = fakePool([]);
    const driver = new OracleDriver(fake.pool, { callTimeoutMs: 1000 });
    const error = await driver
      .runBlock(block, executeAgentBinds('A', '[]'), { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'cancelled' });
    expect(fake.calls).toEqual([]);
  });
});
