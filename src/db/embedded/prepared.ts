import { messages, type PGlite, parse, protocol, types } from '@electric-sql/pglite';
import type { BindValue } from '../driver.js';

/** A statement's rows as PGlite returns them with `rowMode: 'array'`, and its column names. */
export interface ArrayRows {
  readonly columns: string[];
  readonly rows: unknown[][];
}

interface Prepared {
  readonly name: string;
  /** The type of each parameter, as the server inferred it when the text was parsed. */
  readonly types: readonly number[];
  /**
   * Its columns' names and types, as the server described them when the text was parsed
   * (none for a statement that returns no rows): every run's rows are parsed by them.
   */
  readonly columns: readonly messages.BackendMessage[];
}

const { serialize, Parser } = protocol;

const ROW_MODE = { rowMode: 'array' } as const;

/**
 * No file-system sync after a run: the data directory is PGlite's in-memory one (database.ts
 * opens it from the snapshot, no dataDir), whose sync does nothing, but costs PGlite's sync
 * lock and two awaits per statement.
 */
const NO_SYNC = { syncToFs: false } as const;

/** Names are numbered per process, so that two caches on one session never name alike. */
let named = 0;

/** How many texts stay prepared: the statements of the registry's common forms, and more. */
const CAPACITY = 256;

function concatenated(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * The driver's statements as named prepared statements of PGlite's one session, as
 * PostGraphile's @dataplan/pg keeps an LRU of them and node-oracledb's statement cache keeps
 * Oracle's parsed cursors: a text is parsed (and its parameters typed) once, and each run is
 * one Bind, Execute and Sync handed to PostgreSQL in one call. PGlite's `query`
 * parses, describes, binds and executes in six calls into the WebAssembly for every run,
 * and PostgreSQL re-parses and re-plans the text each time: for the planner's statements
 * that is most of their cost (a page of runs: 4.2 → 1.5 ms on the loaded machine). Each text
 * runs on its generic plan, made once (the session's plan_cache_mode, set in database.ts):
 * left to choose, PostgreSQL planned a page whose size is a bind afresh on every run. Values are serialised as `query` serialises
 * them (PGlite's serializers by the parameter's type, else their text), and rows parsed by
 * PGlite's own parser; the least recently used text is closed beyond CAPACITY. A run waits
 * for PGlite's transaction and query locks, as `query` does.
 */
export class PreparedStatements {
  /** By text, least recently used first. */
  private readonly prepared = new Map<string, Prepared>();
  /**
   * PGlite's parsers, but JSON (the embedded CLOB, src/db/embedded/plsql.ts) stays its text,
   * as Oracle hands a CLOB over: the readers parse it where they read it (jsonOrNull in
   * src/db/rows.ts). In the worker thread (worker.ts) a planned statement's lists then cross
   * to the serving thread as one string each, copied whole, instead of parsed here and
   * cloned value by value and rebuilt there.
   */
  private readonly parsers: PGlite['parsers'];
  /** Reads the replies of rowsNow's exchanges (PGlite's own parser of the protocol). */
  private readonly parser = new Parser();

  constructor(private readonly pg: PGlite) {
    this.parsers = { ...pg.parsers, [types.JSON]: (text: string) => text };
  }

  /**
   * The same run as `rows`, done before it returns, for a caller that knows nothing else is
   * using the session (no statement in progress, no transaction open: worker-thread.ts).
   * PGlite's locks are for statements that wait between their messages; this one sends
   * each exchange whole and reads its replies as they come, with no wait, so no other
   * statement can come between them (the locks' promises cost about a tenth of a small
   * page's statement).
   */
  rowsNow(text: string, params: readonly BindValue[], maxRows: number | undefined): ArrayRows {
    try {
      return this.runNow(text, params, maxRows);
    } catch (error) {
      if (error instanceof messages.DatabaseError) {
        Object.assign(error, { query: text, params, queryOptions: ROW_MODE });
      }
      throw error;
    }
  }

  rows(
    text: string,
    params: readonly BindValue[],
    maxRows: number | undefined,
  ): Promise<ArrayRows> {
    return this.pg._runExclusiveTransaction(() =>
      this.pg._runExclusiveQuery(() =>
        this.run(text, params, maxRows).catch((error: unknown) => {
          // As PGlite's `query` reports one (makePGliteError): the text and values with it.
          if (error instanceof messages.DatabaseError) {
            Object.assign(error, { query: text, params, queryOptions: ROW_MODE });
          }
          throw error;
        }),
      ),
    );
  }

  private async run(
    text: string,
    params: readonly BindValue[],
    maxRows: number | undefined,
  ): Promise<ArrayRows> {
    let prepared = this.prepared.get(text);
    if (prepared) {
      this.prepared.delete(text);
      this.prepared.set(text, prepared);
    } else {
      prepared = await this.prepare(text);
    }
    const { messages: replies } = await this.pg.execProtocol(
      this.execution(prepared, params),
      NO_SYNC,
    );
    return this.arrayRows(prepared, replies, maxRows);
  }

  private runNow(
    text: string,
    params: readonly BindValue[],
    maxRows: number | undefined,
  ): ArrayRows {
    let prepared = this.prepared.get(text);
    if (prepared) {
      this.prepared.delete(text);
      this.prepared.set(text, prepared);
    } else {
      const name = `agent_graph_${++named}`;
      const replies = this.exchangeNow(
        concatenated([
          serialize.parse({ name, text }),
          serialize.describe({ type: 'S', name }),
          serialize.sync(),
        ]),
      );
      prepared = this.described(text, name, replies);
      const closing = this.oldestBeyondCapacity();
      if (closing) {
        this.exchangeNow(
          concatenated([serialize.close({ type: 'S', name: closing }), serialize.sync()]),
        );
      }
    }
    const replies = this.exchangeNow(this.execution(prepared, params));
    return this.arrayRows(prepared, replies, maxRows);
  }

  /**
   * One exchange with PostgreSQL, whole, before it returns: PGlite runs a message through its
   * WebAssembly synchronously and hands each reply's bytes to `onRawData` as they are
   * written (no file-system sync, so nothing waits); the first error is thrown, as
   * execProtocol throws it.
   */
  private exchangeNow(message: Uint8Array): messages.BackendMessage[] {
    const replies: messages.BackendMessage[] = [];
    this.pg
      .execProtocolRawStream(message, {
        ...NO_SYNC,
        onRawData: (bytes) => this.parser.parse(bytes, (reply) => replies.push(reply)),
      })
      // A failure of PGlite itself leaves the exchange without its end, which the check below
      // reports now; the promise only settles later.
      .catch(() => undefined);
    if (replies.at(-1)?.name !== 'readyForQuery') {
      // PGlite did not finish the exchange before returning: its reply is lost to us, and the
      // session may be mid-statement, so nothing more can run on it.
      throw new Error('PGlite did not answer the statement before returning');
    }
    const error = replies.find((reply) => reply instanceof messages.DatabaseError);
    if (error) throw error;
    return replies;
  }

  private execution(prepared: Prepared, params: readonly BindValue[]): Uint8Array {
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      const serializer = this.pg.serializers[prepared.types[i] as number];
      return serializer ? serializer(value) : String(value);
    });
    // No Describe of the portal: its row description is the statement's, read once when the
    // text was parsed (a text's result columns stay as parsed, or PostgreSQL refuses to run it).
    return concatenated([
      serialize.bind({ statement: prepared.name, values }),
      serialize.execute({}),
      serialize.sync(),
    ]);
  }

  private arrayRows(
    prepared: Prepared,
    replies: readonly messages.BackendMessage[],
    maxRows: number | undefined,
  ): ArrayRows {
    const [result] = parse.parseResults([...prepared.columns, ...replies], this.parsers, ROW_MODE);
    const rows = (result?.rows ?? []) as unknown[][];
    return {
      columns: (result?.fields ?? []).map((field) => field.name),
      rows: maxRows === undefined ? rows : rows.slice(0, maxRows),
    };
  }

  private described(text: string, name: string, replies: messages.BackendMessage[]): Prepared {
    const prepared = {
      name,
      types: parse.parseDescribeStatementResults(replies),
      columns: replies.filter((reply) => reply.name === 'rowDescription'),
    };
    this.prepared.set(text, prepared);
    return prepared;
  }

  /** The least recently used text's name, forgotten, once more than CAPACITY are prepared. */
  private oldestBeyondCapacity(): string | undefined {
    if (this.prepared.size <= CAPACITY) return undefined;
    const [oldest, { name }] = this.prepared.entries().next().value as [string, Prepared];
    this.prepared.delete(oldest);
    return name;
  }

  private async prepare(text: string): Promise<Prepared> {
    const name = `agent_graph_${++named}`;
    const { messages: replies } = await this.pg.execProtocol(
      concatenated([
        serialize.parse({ name, text }),
        serialize.describe({ type: 'S', name }),
        serialize.sync(),
      ]),
      NO_SYNC,
    );
    const prepared = this.described(text, name, replies);
    const closing = this.oldestBeyondCapacity();
    if (closing) {
      await this.pg.execProtocol(
        concatenated([serialize.close({ type: 'S', name: closing }), serialize.sync()]),
        NO_SYNC,
      );
    }
    return prepared;
  }
}
