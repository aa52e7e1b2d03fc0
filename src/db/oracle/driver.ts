import oracledb from 'oracledb';
import type { OracleDatabaseConfig } from '../../config.js';
import { AppError, StartupError } from '../../errors.js';
import {
  type AgentDetailsProbe,
  type Binds,
  type Block,
  CallInterrupted,
  type CallOptions,
  type Driver,
  describedForSessionUser,
  outerOrder,
  type PoolStatistics,
  type QueryOptions,
  type Row,
  type Statement,
  type ViewColumns,
} from '../driver.js';
import { runInUtc } from '../process-zone.js';
import { normalizeRow } from '../rows.js';
import { sql } from '../sql/fragment.js';
import { inList } from '../sql/in-lists.js';
import { built, query } from '../sql/query.js';
import { describeAgentProbe } from '../sql/session.js';
import { errorCode, mapQueryError, reportedLine, startupError } from './errors.js';
import { connectTarget, poolAttributes } from './options.js';

/** The part of an oracledb Pool the driver uses; tests substitute a fake. */
export interface OraclePool {
  getConnection(): Promise<OracleConnection>;
  close(drainSeconds: number): Promise<void>;
  getStatistics(): OraclePoolStatistics | null;
}

/** Documented fields of pool.getStatistics() that @types/oracledb does not declare. */
export interface OraclePoolStatistics {
  readonly connectionsOpen: number;
  readonly connectionsInUse: number;
  readonly currentQueueLength: number;
  readonly requestTimeouts: number;
}

export interface OracleConnection {
  callTimeout?: number | undefined;
  /** Interrupts the call in progress on the database (it fails with ORA-01013). */
  break(): Promise<void>;
  execute<T>(
    sql: string,
    binds: oracledb.BindParameters,
    options: oracledb.ExecuteOptions,
  ): Promise<oracledb.Result<T>>;
  close(): Promise<void>;
}

export interface OracleDriverOptions {
  readonly callTimeoutMs: number;
  /**
   * The dictionary discovery's own call timeout: ALL_SYNONYMS and ALL_TAB_COLUMNS can be slow
   * on Autonomous Database, and a timeout there stops start-up. Defaults to callTimeoutMs.
   */
  readonly discoveryTimeoutMs?: number;
  /** Told once when agent descriptions cannot be read (see queryWithAgentDetails). */
  readonly warn?: (message: string) => void;
}

/**
 * CLOBs arrive as strings (JSON and text columns). Dates need nothing: the process runs in
 * UTC (src/db/process-zone.ts), so Thin's local wall clocks are the views' UTC ones.
 */
export function fetchTypeHandler(
  metadata: oracledb.Metadata<unknown>,
): oracledb.FetchTypeResponse | undefined {
  switch (metadata.dbType) {
    case oracledb.DB_TYPE_CLOB:
    case oracledb.DB_TYPE_NCLOB:
      return { type: oracledb.STRING };
    default:
      return undefined;
  }
}

/** How long a broken call may take to come back before the driver's call timeout ends it. */
const BREAK_GRACE_MS = 5_000;

/** CLOB OUT binds arrive as Lob objects: their text, and the temporary LOBs freed. */
async function readLobs(values: Record<string, unknown>): Promise<Record<string, unknown>> {
  const entries = await Promise.all(
    Object.entries(values).map(async ([name, value]) => {
      if (!isLob(value)) return [name, value] as const;
      try {
        return [name, await value.getData()] as const;
      } finally {
        value.destroy();
      }
    }),
  );
  return Object.fromEntries(entries);
}

const isLob = (value: unknown): value is { getData(): Promise<unknown>; destroy(): void } =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as { getData?: unknown }).getData === 'function';

const EXECUTE_OPTIONS: oracledb.ExecuteOptions = {
  outFormat: oracledb.OUT_FORMAT_OBJECT,
  fetchTypeHandler,
};

/**
 * DESCRIBE_AGENT for every row, in the statement's own round trip: an inline PL/SQL function
 * (Oracle 12c+) that answers NULL where the procedure raises, as for an agent the session
 * cannot see. The alias matches the embedded driver's, so rows carry `agentDetails` alike.
 */
export function withAgentDetails(statement: Pick<Statement, 'text' | 'orderedBy'>): string {
  return (
    'WITH FUNCTION describe_agent_or_null(p VARCHAR2) RETURN CLOB IS l CLOB; ' +
    'BEGIN DBMS_AI_AGENT.DESCRIBE_AGENT(agent_name => p, agent_details => l); RETURN l; ' +
    // ORA-01013 (a break: the call timeout, a cancelled operation) is an exception PL/SQL's
    // WHEN OTHERS catches too; answering NULL for it would let the statement go on describing
    // the remaining rows while the client waits, so the cancel is raised again.
    'EXCEPTION WHEN OTHERS THEN IF SQLCODE = -1013 THEN RAISE; END IF; RETURN NULL; END; ' +
    `SELECT q.*, ${describedForSessionUser('describe_agent_or_null(q.AGENT_NAME)')} AS AGENT_DETAILS FROM (${statement.text}) q` +
    outerOrder(statement)
  );
}

const withoutAgentDetails = (statement: Pick<Statement, 'text' | 'orderedBy'>) =>
  `SELECT q.*, NULL AS AGENT_DETAILS FROM (${statement.text}) q${outerOrder(statement)}`;

/**
 * The wrapper did not compile: an anonymous block reports ORA-06550, an inline WITH FUNCTION
 * ORA-06552 ("PL/SQL: Statement ignored") and ORA-06553 ("PLS-201: identifier … must be
 * declared", "PLS-306: wrong number or types of arguments"): 19c without DBMS_AI_AGENT, 26ai
 * without a direct EXECUTE grant, or another signature. Any PLS- line means the same.
 */
export function isCompileError(error: unknown): boolean {
  const code = errorCode(error);
  if (code === 'ORA-06550' || code === 'ORA-06552' || code === 'ORA-06553') return true;
  return /^(ORA-\d+: )?PLS-\d+:/m.test(String((error as Error | undefined)?.message ?? ''));
}

/**
 * PLS- codes of a block that cannot reach what it calls: an identifier not declared (the
 * package missing, or not granted: PLS-00201), a component the package lacks (PLS-00302),
 * insufficient privilege (PLS-00904). A grant or a release is missing; any other compile
 * error (a syntax error, PLS-00103; wrong arguments, PLS-00306) is a fault of the block's text.
 */
const UNREACHABLE = /\bPLS-(00201|00302|00904):/;

/** A compile error that says a grant or an object is missing, not that the text is wrong. */
export function isMissingObject(error: unknown): boolean {
  return isCompileError(error) && UNREACHABLE.test(String((error as Error | undefined)?.message));
}

/** The line of a compile error worth logging: its PLS- line, else its first. */
const compileReason = (error: unknown) => reportedLine(String((error as Error).message));

const BIND_TYPES = {
  CLOB: oracledb.DB_TYPE_CLOB,
  NCLOB: oracledb.DB_TYPE_NCLOB,
  JSON: oracledb.DB_TYPE_JSON,
} as const;

/**
 * A block's binds, those it names in `inputTypes` bound as that type (a CLOB from the string,
 * a JSON value parsed from its text), so that PL/SQL picks the overload discovery chose.
 */
function typedInputs(block: Block, binds: Binds): Record<string, unknown> {
  if (!block.inputTypes) return { ...binds };
  const typed: Record<string, unknown> = { ...binds };
  for (const [name, type] of Object.entries(block.inputTypes)) {
    const value = binds[name];
    if (value === undefined) continue;
    typed[name] = {
      dir: oracledb.BIND_IN,
      type: BIND_TYPES[type],
      val: type === 'JSON' && typeof value === 'string' ? JSON.parse(value) : value,
    };
  }
  return typed;
}

/**
 * The columns of each view as the statements will resolve its unqualified name: an object of
 * that name in the session's own schema first (how the contract suite's fixture stands in for
 * the real views), else the object behind the PUBLIC synonym. The real views are SYS-owned
 * public synonyms, and V$ names point to SYS.V_$ views, so the synonym resolves both without
 * hard-wiring an owner.
 */
export function columnsStatement(views: readonly string[]): { text: string; binds: Binds } {
  const list = inList('view', views);
  const { statement, binds } = query(
    'dictionary.columns',
    sql`SELECT c.TABLE_NAME AS VIEW_NAME, c.COLUMN_NAME, c.DATA_TYPE, 1 AS PRECEDENCE
       FROM USER_TAB_COLUMNS c WHERE c.TABLE_NAME IN (${list})
       UNION ALL
       SELECT s.SYNONYM_NAME AS VIEW_NAME, c.COLUMN_NAME, c.DATA_TYPE, 2 AS PRECEDENCE
       FROM ALL_SYNONYMS s
       JOIN ALL_TAB_COLUMNS c ON c.OWNER = s.TABLE_OWNER AND c.TABLE_NAME = s.TABLE_NAME
       WHERE s.OWNER = 'PUBLIC' AND s.SYNONYM_NAME IN (${list})`,
    (row) => row,
  );
  return { text: statement.text, binds };
}

export class OracleDriver implements Driver {
  readonly kind = 'oracle' as const;
  private describeAgentCallable = true;
  private describeAgentWarned = false;
  private closed = false;

  constructor(
    private readonly pool: OraclePool,
    private readonly options: OracleDriverOptions,
  ) {
    runInUtc();
  }

  async query(statement: Statement, binds: Binds = {}, options: QueryOptions = {}): Promise<Row[]> {
    return this.run(built(statement).text, binds, options);
  }

  /**
   * Where DBMS_AI_AGENT cannot be compiled into the statement (not installed before 26ai, not
   * granted, or another signature), every statement would fail to compile. The rows are still
   * worth having: the driver says so once and reads them without descriptions. The start-up
   * probe decides this before the first request; a compile error later (a grant revoked)
   * decides it again.
   */
  async queryWithAgentDetails(
    statement: Statement,
    binds: Binds = {},
    options: QueryOptions = {},
  ): Promise<Row[]> {
    built(statement);
    if (this.describeAgentCallable) {
      try {
        return await this.run(withAgentDetails(statement), binds, options);
      } catch (error) {
        if (!isCompileError(error)) throw error;
        this.notCallable(compileReason(error));
      }
    }
    return this.run(withoutAgentDetails(statement), binds, options);
  }

  async runBlock(block: Block, binds: Binds, options: CallOptions = {}): Promise<Row> {
    const { text } = built(block.oracle);
    const out = Object.fromEntries(
      block.outputs.map((name) => [
        name,
        block.lobOutputs
          ? { dir: oracledb.BIND_OUT, type: oracledb.DB_TYPE_CLOB }
          : { dir: oracledb.BIND_OUT, type: oracledb.STRING, maxSize: 4000 },
      ]),
    );
    let connection: OracleConnection | undefined;
    let interrupted: CallInterrupted | undefined;
    let timer: NodeJS.Timeout | undefined;
    const { signal, timeoutMs } = options;
    // connection.break() cancels the call on the database (node-oracledb: the execute then
    // fails with ORA-01013), so an abandoned or overdue EXECUTE_AGENT stops spending there.
    const interrupt = (reason: CallInterrupted) => {
      interrupted ??= reason;
      connection?.break().catch(() => undefined);
    };
    const onAbort = () => interrupt(new CallInterrupted('cancelled'));
    try {
      if (signal?.aborted) throw new CallInterrupted('cancelled');
      connection = await this.pool.getConnection();
      // The driver's own call timeout stays as a backstop behind the interrupting timer.
      connection.callTimeout =
        timeoutMs === undefined ? this.options.callTimeoutMs : timeoutMs + BREAK_GRACE_MS;
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => interrupt(new CallInterrupted('timeout', timeoutMs)), timeoutMs);
      }
      const result = await connection.execute<Record<string, unknown>>(
        text,
        { ...typedInputs(block, binds), ...out } as oracledb.BindParameters,
        block.commits ? { ...EXECUTE_OPTIONS, autoCommit: true } : EXECUTE_OPTIONS,
      );
      if (interrupted) throw interrupted;
      const values = (result.outBinds ?? {}) as Record<string, unknown>;
      return normalizeRow(block.lobOutputs ? await readLobs(values) : values);
    } catch (error) {
      if (interrupted) throw interrupted;
      if (error instanceof CallInterrupted) throw error;
      // ORA-27486: the scheduler refuses the job; a compile error naming what the block cannot
      // reach: a package it calls is missing or not executable (PLS-00201). Another compile
      // error (a syntax error) is not a grant to ask for: it stays what it is.
      const code = errorCode(error);
      if (code === 'ORA-27486' || code === 'ORA-01031' || isMissingObject(error)) {
        throw new AppError(
          'FORBIDDEN',
          `${block.name} cannot run as the agent-graph database user: it needs ${block.privileges}`,
          { cause: error },
        );
      }
      throw mapQueryError(error, text);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      await connection?.close().catch(() => undefined);
    }
  }

  async probeAgentDetails(): Promise<AgentDetailsProbe> {
    try {
      await this.run(withAgentDetails(describeAgentProbe.statement), {}, {});
      this.describeAgentCallable = true;
      return { callable: true, reason: null };
    } catch (error) {
      if (!isCompileError(error)) throw error;
      const reason = compileReason(error);
      this.notCallable(reason);
      return { callable: false, reason };
    }
  }

  private notCallable(reason: string): void {
    this.describeAgentCallable = false;
    // Concurrent statements can all fail this way; one warning is enough.
    if (this.describeAgentWarned) return;
    this.describeAgentWarned = true;
    this.options.warn?.(
      'DBMS_AI_AGENT.DESCRIBE_AGENT cannot be called by the agent-graph database user ' +
        '(grant EXECUTE ON DBMS_AI_AGENT on Oracle AI Database 26ai); agent descriptions ' +
        `and call contracts read as null: ${reason}`,
    );
  }

  async columnsOf(views: readonly string[]): Promise<Map<string, ViewColumns>> {
    const columns = new Map<string, ViewColumns>();
    if (views.length === 0) return columns;
    const { text, binds } = columnsStatement(views);
    const precedence = new Map<string, number>();
    const timeout = this.options.discoveryTimeoutMs ?? this.options.callTimeoutMs;
    for (const row of await this.run(text, binds, { callTimeoutMs: timeout })) {
      const view = String(row.viewName);
      const rank = Number(row.precedence);
      const current = precedence.get(view);
      if (current !== undefined && current < rank) continue;
      if (current === undefined || current > rank) {
        precedence.set(view, rank);
        columns.set(view, new Map());
      }
      columns.get(view)?.set(String(row.columnName), String(row.dataType));
    }
    return columns;
  }

  async ping(): Promise<void> {
    await this.run('SELECT 1 FROM DUAL', {}, {});
  }

  /** Lets connections in use finish for up to `drainSeconds`, then closes them all. */
  async close(drainSeconds = 0): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.close(drainSeconds);
  }

  poolStatistics(): PoolStatistics | null {
    const statistics = this.pool.getStatistics();
    if (statistics === null) return null;
    return {
      connectionsOpen: statistics.connectionsOpen,
      connectionsInUse: statistics.connectionsInUse,
      queueLength: statistics.currentQueueLength,
      queueTimeouts: statistics.requestTimeouts,
    };
  }

  /** Opens `count` connections (at least one) and checks that the database answers. */
  async warmUp(count: number): Promise<void> {
    const connections = await Promise.all(
      Array.from({ length: Math.max(1, count) }, () => this.pool.getConnection()),
    );
    try {
      const [first] = connections as [OracleConnection];
      first.callTimeout = this.options.callTimeoutMs;
      await first.execute('SELECT 1 FROM DUAL', {}, EXECUTE_OPTIONS);
    } finally {
      await Promise.all(connections.map((connection) => connection.close()));
    }
  }

  private async run(
    sql: string,
    binds: Binds,
    options: QueryOptions & { readonly callTimeoutMs?: number },
  ): Promise<Row[]> {
    let connection: OracleConnection | undefined;
    try {
      connection = await this.pool.getConnection();
      connection.callTimeout = options.callTimeoutMs ?? this.options.callTimeoutMs;
      const result = await connection.execute<Record<string, unknown>>(
        sql,
        binds as oracledb.BindParameters,
        options.maxRows === undefined
          ? EXECUTE_OPTIONS
          : { ...EXECUTE_OPTIONS, maxRows: options.maxRows },
      );
      return (result.rows ?? []).map(normalizeRow);
    } catch (error) {
      throw mapQueryError(error, sql);
    } finally {
      // A connection that broke mid-call is dropped by the pool; failing to hand it back
      // adds nothing to the statement's own outcome.
      await connection?.close().catch(() => undefined);
    }
  }
}

function adapt(pool: oracledb.Pool): OraclePool {
  return {
    getConnection: () => pool.getConnection(),
    close: (drainSeconds) => pool.close(drainSeconds),
    getStatistics: () => pool.getStatistics() as unknown as OraclePoolStatistics | null,
  };
}

/**
 * Creates the pool and proves the database answers within DB_CONNECT_TIMEOUT_MS, or fails with
 * one operator-readable StartupError. Thin mode needs no Oracle Client libraries.
 */
export async function openOracleDriver(
  config: OracleDatabaseConfig,
  warn?: (message: string) => void,
): Promise<OracleDriver> {
  const target = { user: config.user, target: connectTarget(config.connectString) };
  let pool: oracledb.Pool;
  try {
    pool = await oracledb.createPool(poolAttributes(config));
  } catch (error) {
    throw startupError(error, target);
  }
  const driver = new OracleDriver(adapt(pool), {
    callTimeoutMs: config.callTimeoutMs,
    discoveryTimeoutMs: config.discoveryTimeoutMs,
    ...(warn ? { warn } : {}),
  });
  const warmUp = driver.warmUp(config.poolMin);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new StartupError(
            `no answer from Oracle at ${target.target} within ${config.connectTimeoutMs} ms (DB_CONNECT_TIMEOUT_MS)`,
          ),
        ),
      config.connectTimeoutMs,
    );
  });
  try {
    await Promise.race([warmUp, deadline]);
    return driver;
  } catch (error) {
    // The attempt that lost the race may still settle; it must not become an unhandled
    // rejection, and closing must not wait for it.
    warmUp.catch(() => undefined);
    pool.close(0).catch(() => undefined);
    throw error instanceof StartupError ? error : startupError(error, target);
  } finally {
    clearTimeout(timer);
  }
}
