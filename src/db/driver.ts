/**
 * The one interface between repositories and a database. Both drivers run the same SQL
 * text (see src/db/sql); what truly differs between Oracle and the embedded database is a
 * named method here, never an `if oracle` in a repository.
 */

/**
 * The mark of a statement that statement() made (src/db/sql/query.ts, the one module
 * that casts to Statement): a key no other module can name, so a statement written by hand
 * is a type error. When a driver runs one, built() checks it was made there.
 */
declare const madeByStatement: unique symbol;

export interface Statement {
  readonly [madeByStatement]: true;
  /** Stable name, used as the metrics label and in the statement registry. */
  readonly name: string;
  /** The SQL text with each bind written `:name`, as Oracle runs it. */
  readonly text: string;
  /**
   * The same text cut at its binds: `pieces[0]`, the bind `placeholders[0]`, `pieces[1]`, …,
   * the last piece. The fragment that built the statement wrote them (statement() in
   * src/db/sql/query.ts), so a driver that numbers its binds ($1, $2, …) writes its text
   * from these, never by reading the SQL.
   */
  readonly pieces: readonly string[];
  readonly placeholders: readonly string[];
  /**
   * The output columns its rows are ordered by, for a driver that wraps the statement in an
   * outer query (queryWithAgentDetails): neither database keeps a subquery's order without it.
   */
  readonly orderedBy?: readonly string[];
}

export type BindValue = string | number | Date | null;
export type Binds = Readonly<Record<string, BindValue>>;

/** A row whose keys are camelCase, whichever case the database returned. */
export type Row = Readonly<Record<string, unknown>>;

/**
 * A PL/SQL call with OUT binds that the embedded database emulates in PL/pgSQL: the two
 * texts differ, so each driver runs its own. Oracle's block assigns the `outputs` as OUT
 * binds; the embedded text returns one row with columns of those names.
 */
export interface Block {
  readonly name: string;
  /** Oracle's block (blockStatement): its text as written, its `:name` binds its placeholders. */
  readonly oracle: Statement;
  /** The emulation's statement, its binds placeholders whose values the call gives. */
  readonly embedded: Statement;
  /** Names of the OUT binds (Oracle) and of the result columns (embedded), lower case. */
  readonly outputs: readonly string[];
  /** The privileges the Oracle block needs, named in the FORBIDDEN error when one lacks. */
  readonly privileges: string;
  /** The outputs are CLOBs read whole (the agent's output and trace), not VARCHAR2(4000). */
  readonly lobOutputs?: boolean;
  /**
   * Oracle types of IN binds that must be bound as that type, not as the driver's default
   * for the value (a string binds as VARCHAR2): the formal type where overloads differ in it
   * alone, which named notation cannot otherwise choose between (PLS-00307).
   */
  readonly inputTypes?: Readonly<Record<string, 'CLOB' | 'NCLOB' | 'JSON'>>;
  /**
   * What the block changed is committed when it succeeds, in the same round trip; otherwise
   * (and when it fails, times out or is broken) releasing the connection rolls it back.
   */
  readonly commits?: boolean;
}

/** How a long call (EXECUTE_AGENT) is bounded: its own time, and the caller going away. */
export interface CallOptions {
  /** Overrides the driver's call timeout; past it the call is cancelled on the database. */
  readonly timeoutMs?: number;
  /** Aborted when the client goes away: the call is cancelled (Oracle) or no longer awaited. */
  readonly signal?: AbortSignal;
}

/** A call that did not finish: its time ran out, or its caller went away (CallOptions). */
export class CallInterrupted extends Error {
  constructor(
    readonly reason: 'timeout' | 'cancelled',
    readonly timeoutMs?: number,
  ) {
    super(
      reason === 'timeout'
        ? `the call did not finish within ${timeoutMs} ms`
        : 'the caller went away',
    );
    this.name = 'CallInterrupted';
  }
}

/** Connection pool state for /metrics; drivers without a pool have none. */
export interface PoolStatistics {
  readonly connectionsOpen: number;
  readonly connectionsInUse: number;
  /** Requests waiting for a connection because the pool is at its maximum. */
  readonly queueLength: number;
  /** Requests that gave up waiting, since the pool was created. */
  readonly queueTimeouts: number;
}

export interface QueryOptions {
  /** Fetch at most this many rows (the self-check reads one). */
  readonly maxRows?: number;
}

/** Column name → data type as the dictionary spells it (`TIMESTAMP(6) WITH TIME ZONE`, …). */
export type ViewColumns = Map<string, string>;

export interface Driver {
  readonly kind: 'embedded' | 'oracle';
  query(statement: Statement, binds?: Binds, options?: QueryOptions): Promise<Row[]>;
  /**
   * Runs the statement and adds an `agentDetails` column: DBMS_AI_AGENT.DESCRIBE_AGENT's
   * JSON for each row's AGENT_NAME (null where the procedure raises), in the same round trip.
   */
  queryWithAgentDetails(
    statement: Statement,
    binds?: Binds,
    options?: QueryOptions,
  ): Promise<Row[]>;
  /**
   * Whether queryWithAgentDetails can call DESCRIBE_AGENT, decided once (at start-up) by
   * running its wrapper over one row; afterwards it reads without details when it cannot.
   */
  probeAgentDetails(): Promise<AgentDetailsProbe>;
  /**
   * Runs a block with IN binds; its OUT values by camelCase name, as a row. With `options`,
   * rejects with CallInterrupted when the time runs out or the signal aborts.
   */
  runBlock(block: Block, binds: Binds, options?: CallOptions): Promise<Row>;
  /** Upper-case column names, with their data types, of each given view that is visible. */
  columnsOf(views: readonly string[]): Promise<Map<string, ViewColumns>>;
  ping(): Promise<void>;
  /** Lets calls in progress finish for up to `drainSeconds` (default 0), then closes. */
  close(drainSeconds?: number): Promise<void>;
  poolStatistics?(): PoolStatistics | null;
}

export interface AgentDetailsProbe {
  readonly callable: boolean;
  /** Why not (the PLS- line of the compile error), or null when callable. */
  readonly reason: string | null;
}

/**
 * `call` (a DESCRIBE_AGENT of q.AGENT_NAME) for the session user's agents only, else NULL, as
 * both drivers' wrappers select it. DESCRIBE_AGENT takes a name, no owner: for another owner's
 * agent it answers nothing, or the session user's agent of the same name, whose description
 * and call contract would then show under the wrong owner. A USER_ view's rows (OWNER null)
 * are all the session user's.
 */
export function describedForSessionUser(call: string): string {
  return `CASE WHEN q.OWNER IS NULL OR q.OWNER = SYS_CONTEXT('USERENV', 'SESSION_USER') THEN ${call} END`;
}

/** ` ORDER BY q.A, q.B`: neither database promises that an outer query keeps the inner order. */
export function outerOrder(statement: Pick<Statement, 'orderedBy'>): string {
  const columns = statement.orderedBy ?? [];
  return columns.length === 0 ? '' : ` ORDER BY ${columns.map((c) => `q.${c}`).join(', ')}`;
}

/** A round trip as the counting driver sees it: its name, text and the names it binds. */
export interface SentStatement {
  readonly name: string;
  /** The text as this driver sends it; null for the driver's own calls (ping, dictionary). */
  readonly text: string | null;
  /** The names of its binds, never their values. */
  readonly bindNames: readonly string[];
}

/** Called once a round trip has settled: rows it returned (null for a call), or failed. */
export type StatementSettled = (rows: number | null, failed: boolean) => void;

/**
 * Every round trip goes through here once, so the statement counter is exact. `count` is told
 * the statement as it is sent and may return a StatementSettled, called once the round trip
 * has settled (rows or error): how the statement-duration histogram times it and how
 * src/db/statement-log.ts records it. Whatever else it returns is ignored. If it throws, the
 * statement is not sent and the call rejects with that error (a stopped operation:
 * OperationUsage in src/context.ts).
 */
export function countStatements(
  driver: Driver,
  count: (statement: SentStatement) => unknown,
): Driver {
  return new CountingDriver(driver, count);
}

const NO_BINDS: readonly string[] = Object.freeze([]);

/**
 * A class rather than an object of arrow functions: every operation and every open
 * subscription holds one, and methods on the prototype cost nothing each.
 */
class CountingDriver implements Driver {
  readonly kind: Driver['kind'];

  constructor(
    private readonly driver: Driver,
    private readonly count: (statement: SentStatement) => unknown,
  ) {
    this.kind = driver.kind;
  }

  query(statement: Statement, binds?: Binds, options?: QueryOptions): Promise<Row[]> {
    return this.sent(statement.name, statement.text, binds, () =>
      this.driver.query(statement, binds, options),
    );
  }

  queryWithAgentDetails(
    statement: Statement,
    binds?: Binds,
    options?: QueryOptions,
  ): Promise<Row[]> {
    return this.sent(statement.name, statement.text, binds, () =>
      this.driver.queryWithAgentDetails(statement, binds, options),
    );
  }

  probeAgentDetails(): Promise<AgentDetailsProbe> {
    return this.sent('agents.describeProbe', null, undefined, () =>
      this.driver.probeAgentDetails(),
    );
  }

  runBlock(block: Block, binds: Binds, options?: CallOptions): Promise<Row> {
    const text = (this.kind === 'oracle' ? block.oracle : block.embedded).text;
    return this.sent(block.name, text, binds, () => this.driver.runBlock(block, binds, options));
  }

  columnsOf(views: readonly string[]): Promise<Map<string, ViewColumns>> {
    return this.sent('dictionary.columns', null, undefined, () => this.driver.columnsOf(views));
  }

  ping(): Promise<void> {
    return this.sent('ping', null, undefined, () => this.driver.ping());
  }

  close(drainSeconds?: number): Promise<void> {
    return this.driver.close(drainSeconds);
  }

  private sent<T>(
    name: string,
    text: string | null,
    binds: Binds | undefined,
    send: () => Promise<T>,
  ): Promise<T> {
    let settled: unknown;
    try {
      settled = this.count({ name, text, bindNames: binds ? Object.keys(binds) : NO_BINDS });
    } catch (error) {
      return Promise.reject(error);
    }
    if (typeof settled !== 'function') return send();
    const done = settled as StatementSettled;
    return send().then(
      (value) => {
        done(Array.isArray(value) ? value.length : null, false);
        return value;
      },
      (error: unknown) => {
        done(null, true);
        throw error;
      },
    );
  }
}
