import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import type { EmbeddedDatabaseConfig } from '../../config.js';
import {
  type AgentDetailsProbe,
  type Binds,
  type BindValue,
  type Block,
  CallInterrupted,
  type CallOptions,
  type Driver,
  describedForSessionUser,
  outerOrder,
  type QueryOptions,
  type Row,
  type Statement,
  type ViewColumns,
} from '../driver.js';
import { normalizeRows } from '../rows.js';
import { sql } from '../sql/fragment.js';
import { built, enclosed, query, statement } from '../sql/query.js';
import { describeAgentProbe } from '../sql/session.js';
import { DDL } from './ddl.js';
import { DEMO_DATE_COLUMNS, DEMO_PRESENT, demoData } from './demo-data.js';
import { ORACLE_BUILTINS, ORACLE_SEARCH_PATH, PLSQL_EMULATION } from './plsql.js';
import { type ArrayRows, PreparedStatements } from './prepared.js';
import { SNAPSHOT_FORMAT, sealed, unsealed, withoutDirectories } from './snapshot.js';

/** What the simulator and the tests run through PGlite, inside a transaction or not. */
export type EmbeddedStatements = Pick<Transaction, 'query' | 'exec'>;

/** PGlite, or its stand-in on the serving thread when PGlite runs in a worker thread. */
export interface EmbeddedPg extends EmbeddedStatements {
  readonly closed: boolean;
  transaction<T>(callback: (tx: EmbeddedStatements) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface EmbeddedDatabase<Pg extends EmbeddedPg = EmbeddedPg> {
  readonly driver: Driver;
  /** For the simulator that writes below GraphQL. */
  readonly pg: Pg;
  /** True when the data directory came from the cached snapshot. */
  readonly fromSnapshot: boolean;
  /** Settles if the database stops serving for good (its worker thread exited); else never. */
  readonly lost?: Promise<DatabaseLost>;
}

/** Why the embedded database can no longer serve. */
export interface DatabaseLost {
  /** The worker thread's exit code. */
  readonly exitCode: number;
  readonly error: Error;
}

/** One informational start-up line: fields, then message (pino's order). */
export type StartupLog = (fields: Record<string, unknown>, message: string) => void;

/**
 * The demo data is a few MB; PostgreSQL's default 128 MB of shared buffers only costs RSS.
 * WAL segments no checkpoint needs any more are removed rather than kept for reuse
 * (`wal_recycle`), so that the snapshot carries only the current one (see INITDB_PARAMS).
 */
const START_PARAMS = [
  ...PGlite.defaultStartParams,
  '-c',
  'shared_buffers=16MB',
  '-c',
  'min_wal_size=2MB',
  '-c',
  'wal_recycle=off',
];

/**
 * 1 MB write-ahead-log segments instead of 16 MB: the snapshot holds whole segments, and with
 * 16 MB ones half of its 28 MB was log, read, checked, unpacked and copied on every start.
 */
const INITDB_PARAMS = ['--wal-segsize=1'];

/** PGlite's `dist` directory, which holds its WebAssembly; its package.json is beside it. */
const pgliteDist = () => dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));

let pgliteVersion: string | undefined;

/**
 * The installed PGlite's version, which names the cached snapshot and cluster: a data directory
 * written by another PostgreSQL build fails to open, so after an upgrade an old file would cost
 * every start a warning and a reseeding until it was deleted.
 */
export function installedPGliteVersion(): string {
  pgliteVersion ??= (
    JSON.parse(readFileSync(join(pgliteDist(), '..', 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
  return pgliteVersion;
}

let pgliteWasm: Promise<WebAssembly.Module> | undefined;

/**
 * PostgreSQL's WebAssembly (9 MB), compiled once per process and handed to every PGlite it
 * opens (PGlite's pgliteWasmModule), a worker thread's with the thread's data (worker.ts): a
 * compiled module crosses to a thread without a copy and V8 shares its code, where a thread
 * left to itself compiles it again, about a second of CPU per server start on a loaded 2-core
 * machine.
 */
export function compiledPGliteWasm(): Promise<WebAssembly.Module> {
  pgliteWasm ??= readFile(
    join(pgliteDist(), 'pglite.wasm'),
    // An ordinary ArrayBuffer under it, as loadSnapshot's.
  ).then((bytes) => WebAssembly.compile(bytes as Buffer<ArrayBuffer>));
  return pgliteWasm;
}

/**
 * Opens PGlite with the Oracle-named views and the demo data. A cold PGlite start plus
 * seeding takes seconds, so the seeded data directory is cached (src/db/embedded/snapshot.ts)
 * keyed by a hash of everything that shapes it, and later starts load that snapshot.
 */
export async function openEmbeddedDatabase(
  config: EmbeddedDatabaseConfig,
  warn: (message: string) => void = () => {},
  log: StartupLog = () => {},
): Promise<EmbeddedDatabase<PGlite>> {
  const { pg, fromSnapshot } = await openPGlite(config, warn, log);
  const prepared = new PreparedStatements(pg);
  const statements: StatementRunner = {
    rows: (text, params, maxRows) => prepared.rows(text, params, maxRows),
    close: async () => {
      if (!pg.closed) await pg.close();
    },
  };
  return { driver: new EmbeddedDriver(statements, config.latencyMs), pg, fromSnapshot };
}

/** PGlite with the schema, the demo data and the session settings, on the calling thread. */
export async function openPGlite(
  config: EmbeddedDatabaseConfig,
  warn: (message: string) => void,
  log: StartupLog,
  /** The thread's copy of compiledPGliteWasm()'s (worker-thread.ts); this thread's when absent. */
  wasm?: WebAssembly.Module,
  /** The serving thread's snapshotFile() (worker-thread.ts); this thread's when absent. */
  snapshotPath = snapshotFile(config.cacheDir),
  /**
   * Run on the data directory as loaded or seeded, before its history moves and its session
   * starts: a reusable database keeps its copy of the tables then (reuse.ts).
   */
  loaded: (pg: PGlite) => Promise<void> = async () => {},
): Promise<{ pg: PGlite; fromSnapshot: boolean }> {
  const started = performance.now();
  const pgliteWasmModule = wasm ?? (await compiledPGliteWasm());
  const elapsedMs = () => Math.round(performance.now() - started);

  const snapshot = await loadSnapshot(snapshotPath, pgliteWasmModule, warn);
  let pg: PGlite;
  const fromSnapshot = snapshot !== undefined;
  if (snapshot) {
    const { readMs, createMs } = snapshot;
    pg = snapshot.pg;
    log(
      { snapshot: snapshotPath, ms: elapsedMs(), readMs, createMs },
      'embedded database loaded from its snapshot',
    );
  } else {
    // The only slow start: say what is happening, or the silence looks like a hang.
    log(
      { snapshot: snapshotPath },
      'first start: seeding the embedded demo database, once (5-20 s; later starts load a snapshot of it in a few seconds)',
    );
    const cluster = await openCluster(config.cacheDir, pgliteWasmModule, warn);
    pg = cluster.pg;
    await seed(pg, demoData());
    const saved = await saveSnapshot(pg, config.cacheDir, snapshotPath);
    log(
      { snapshot: saved ? snapshotPath : null, ms: elapsedMs(), initdb: !cluster.cached },
      saved
        ? `embedded database seeded in ${(elapsedMs() / 1000).toFixed(1)} s; snapshot saved for later starts`
        : `embedded database seeded in ${(elapsedMs() / 1000).toFixed(1)} s; the snapshot could not be saved in ${config.cacheDir} (set EMBEDDED_CACHE_DIR to a writable directory), so every start seeds`,
    );
  }
  await loaded(pg);
  await moveHistoryToPresent(pg, config.demoNow ?? Date.now());
  await startSession(pg, config);
  return { pg, fromSnapshot };
}

/**
 * The session settings the embedded database serves with, on a new session or one that
 * DISCARD ALL has reset (reuse.ts).
 */
export async function startSession(
  pg: EmbeddedStatements,
  config: Pick<EmbeddedDatabaseConfig, 'sessionUser'>,
): Promise<void> {
  await pg.query(`SELECT set_config('agentgraph.session_user', $1, false)`, [config.sessionUser]);
  await pg.exec(`SET TIME ZONE 'UTC'`);
  // The driver's prepared statements (prepared.ts) run on one plan each. Left to choose,
  // PostgreSQL plans a text afresh on every run whenever its generic plan looks dearer, as it
  // does for a planned statement whose page size is a bind (FETCH FIRST :page_limit: a generic
  // plan guesses a tenth of the table): planning a statement of five lists cost more than
  // running it (docs/operations.md, "Shapes against the anchor").
  await pg.exec(`SET plan_cache_mode = force_generic_plan`);
  // Every page of PGlite's data is in memory: reading one, in order or not, costs about what
  // handling a few of its rows does, as PostgreSQL's documentation advises for a database
  // held in RAM (its defaults, 1 and 4, price a page as a hundred rows from a disk). Priced
  // as a disk, a list below a root scanned a whole table into a hash join where probing its
  // index once per parent run reads a few rows: the tasks of a page of runs or of tool calls
  // (docs/operations.md, "Shapes against the anchor").
  await pg.exec(`SET seq_page_cost = 0.1`);
  await pg.exec(`SET random_page_cost = 0.1`);
  // Oracle's ||, DUAL, SYS_CONTEXT and PRODUCT_COMPONENT_VERSION, behind the public schema
  // (plsql.ts).
  await pg.exec(`SET search_path TO ${ORACLE_SEARCH_PATH}`);
}

/**
 * Moves every history date (DEMO_DATE_COLUMNS) by the whole seconds from DEMO_PRESENT to
 * `now`, after the snapshot was saved or loaded: the snapshot keeps the generated dates, so
 * it stays valid on any day, and the history a person sees ends where they are (a few
 * thousand rows: 0.2-0.8 s of a start on a busy 2-core machine).
 */
async function moveHistoryToPresent(pg: PGlite, now: number): Promise<void> {
  const seconds = historySeconds(now);
  if (seconds === 0) return;
  // Moved in a copy without indexes and put back, rather than updated in place: the dates
  // are indexed, so no update of a row in place is HOT, and each left its old version behind,
  // every table served with twice its pages and index entries, and the planner, scaling the
  // snapshot's row counts by the pages, expected twice the rows. Put back, the tables are
  // compact, as a reused database's restore (reuse.ts) and PostGraphile's anchor load them.
  await pg.transaction(async (tx) => {
    for (const [table, columns] of Object.entries(DEMO_DATE_COLUMNS)) {
      const moved = columns.map((column) => `${column} = ${movedDate(column)}`);
      await tx.exec(`CREATE TEMPORARY TABLE emb_moving AS SELECT * FROM ${table}`);
      await tx.query(`UPDATE emb_moving SET ${moved.join(', ')}`, [seconds]);
      await tx.exec(
        `TRUNCATE ${table}; INSERT INTO ${table} SELECT * FROM emb_moving; DROP TABLE emb_moving`,
      );
    }
  });
  // The statistics of the moved dates, and the row counts TRUNCATE forgot.
  await pg.exec(`ANALYZE ${Object.keys(DEMO_DATE_COLUMNS).join(', ')}`);
}

/** The whole seconds from DEMO_PRESENT to `now`: how far the history moves. */
export function historySeconds(now: number): number {
  return Math.floor((now - DEMO_PRESENT) / 1000);
}

/** A history date moved by the seconds bound as $1. */
export function movedDate(column: string): string {
  return `${column} + $1 * interval '1 second'`;
}

let snapshotKey: string | undefined;

/**
 * Where the snapshot of this version's schema and demo data is cached. The key hashes the
 * generated demo data, which takes a third of a second of CPU to generate and serialise: it is
 * computed once per process, and a database thread is handed it (worker-thread.ts).
 */
export function snapshotFile(cacheDir: string): string {
  snapshotKey ??= createHash('sha256')
    .update(SNAPSHOT_FORMAT)
    .update(ORACLE_BUILTINS)
    .update(DDL)
    .update(PLSQL_EMULATION)
    .update(JSON.stringify(demoData()))
    .digest('hex')
    .slice(0, 16);
  return join(cacheDir, `pglite-${installedPGliteVersion()}-${snapshotKey}.tar`);
}

/**
 * Where PostgreSQL's empty cluster (initdb's data directory, before the schema or any row) is
 * cached, in the same stored form as the snapshot. A change of the schema or the demo data
 * (any upgrade of agent-graph) seeds again, and initdb was most of a seeding's time: 5-9 s of
 * CPU on a 2-core machine, where loading its cached output takes under one.
 */
export function clusterFile(cacheDir: string): string {
  const key = createHash('sha256')
    .update(SNAPSHOT_FORMAT)
    .update(JSON.stringify(INITDB_PARAMS))
    .digest('hex')
    .slice(0, 16);
  return join(cacheDir, `pglite-cluster-${installedPGliteVersion()}-${key}.tar`);
}

/**
 * An empty cluster to seed: the cached one (clusterFile), else initdb's, saved for the next
 * seeding (its dump costs a first start about a second of CPU).
 */
async function openCluster(
  cacheDir: string,
  pgliteWasmModule: WebAssembly.Module,
  warn: (message: string) => void,
): Promise<{ pg: PGlite; cached: boolean }> {
  const path = clusterFile(cacheDir);
  const loaded = await loadSnapshot(path, pgliteWasmModule, warn, 'running initdb again');
  if (loaded) return { pg: loaded.pg, cached: true };
  const pg = await PGlite.create({
    pgliteWasmModule,
    startParams: START_PARAMS,
    initDbStartParams: INITDB_PARAMS,
  });
  await saveSnapshot(pg, cacheDir, path);
  return { pg, cached: false };
}

/**
 * The cached data directory, or undefined when there is none or it cannot be used. It is a
 * cache: a truncated or corrupt one (its seal does not match: src/db/embedded/snapshot.ts) is
 * deleted, with one log line naming it and saying what happens `instead`. The same for the
 * snapshot and the empty cluster (clusterFile).
 */
export async function loadSnapshot(
  path: string,
  pgliteWasmModule: WebAssembly.Module,
  warn: (message: string) => void,
  instead = 'seeding again',
): Promise<{ pg: PGlite; readMs: number; createMs: number } | undefined> {
  const started = performance.now();
  // readFile's Buffer sits on an ordinary ArrayBuffer; @types/node 22 types it as possibly shared.
  const stored = (await readFile(path).catch(() => undefined)) as Buffer<ArrayBuffer> | undefined;
  if (!stored) return undefined;
  let pg: PGlite | undefined;
  try {
    const tar = unsealed(stored);
    if (!tar) throw new Error('not a whole snapshot');
    // The two parts of a load, in the start-up line (bench/start-time.ts reads them).
    const read = performance.now();
    pg = await PGlite.create({
      loadDataDir: new TarBlob(tar),
      pgliteWasmModule,
      startParams: START_PARAMS,
    });
    return {
      pg,
      readMs: Math.round(read - started),
      createMs: Math.round(performance.now() - read),
    };
  } catch (error) {
    await pg?.close().catch(() => undefined);
    const reason = error instanceof Error ? error.message : String(error);
    warn(`embedded snapshot ${path} is unreadable (${reason}); deleting it and ${instead}`);
    await unlink(path).catch(() => undefined);
    return undefined;
  }
}

/**
 * The snapshot's tar as PGlite's `loadDataDir` reads it (`arrayBuffer()` and `type`, nothing
 * else), without copying it into a Blob: Node's Blob copies 28 MB in and reads it back out in
 * chunks, about 0.4-0.6 s of CPU per start on a loaded 2-core machine (PGlite offers no way to
 * hand it bytes).
 */
class TarBlob extends Blob {
  constructor(private readonly tar: Buffer<ArrayBuffer>) {
    super([], { type: 'application/x-tar' });
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    const { buffer, byteOffset, byteLength } = this.tar;
    // The file as read, seal included, is handed over as it is: PGlite's untar stops at the
    // tar's end-of-archive blocks, and the seal is shorter than one tar record anyway.
    if (byteOffset === 0 && buffer.byteLength - byteLength < 512) return Promise.resolve(buffer);
    return Promise.resolve(buffer.slice(byteOffset, byteOffset + byteLength));
  }
}

async function seed(pg: PGlite, data: Record<string, Record<string, unknown>[]>): Promise<void> {
  await pg.exec(ORACLE_BUILTINS);
  await pg.exec(DDL);
  await pg.exec(PLSQL_EMULATION);
  for (const [table, rows] of Object.entries(data)) {
    if (rows.length === 0) continue;
    await pg.query(
      `INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1)`,
      [JSON.stringify(rows)],
    );
  }
  await pg.exec('ANALYZE');
}

async function saveSnapshot(pg: PGlite, dir: string, path: string): Promise<boolean> {
  try {
    const templates = await pg.query<{ oid: number }>(
      'SELECT oid::int AS oid FROM pg_database WHERE datistemplate',
    );
    // PGlite dumps the directory of a running server: without a checkpoint first, every load
    // replays the seeding's write-ahead log (about 4 MB, a fifth of PGlite.create's time).
    await pg.exec('CHECKPOINT');
    const dump = await pg.dumpDataDir('none');
    const tar = withoutDirectories(
      new Uint8Array(await dump.arrayBuffer()),
      templates.rows.map((row) => `base/${row.oid}`),
    );
    await mkdir(dir, { recursive: true });
    const temporary = `${path}.${process.pid}.tmp`;
    await writeFile(temporary, sealed(tar));
    await rename(temporary, path);
    await removeOldSnapshots(dir, [path, clusterFile(dir)]);
    return true;
  } catch {
    // A read-only cache directory only costs the next start its seeding time.
    return false;
  }
}

/**
 * Snapshots and clusters of other versions' schema, data or format (such as the gzipped
 * `.tar.gz`), and saves that a killed process left half-written, once they are an hour old:
 * otherwise each change of the schema or the demo data leaves 14 MB behind for good. One
 * written within the hour stays: a process of another version may have just made it.
 */
async function removeOldSnapshots(dir: string, kept: readonly string[]): Promise<void> {
  const hourAgo = Date.now() - 3_600_000;
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    if (kept.includes(path) || !/^pglite-(cluster-)?([0-9][\w.-]*-)?[0-9a-f]+\.tar/.test(name))
      continue;
    const written = await stat(path).then(
      (stats) => stats.mtimeMs,
      () => Date.now(),
    );
    if (written < hourAgo) await unlink(path).catch(() => undefined);
  }
}

/**
 * The statement's text with its binds numbered, `$1` for the first name, a name used twice
 * keeping its number, and the name each number stands for: written from the pieces the
 * fragment cut the text into (src/db/driver.ts, Statement), so the SQL is never read. This is
 * the only change the embedded driver makes to SQL text.
 */
export function numbered(statement: Pick<Statement, 'pieces' | 'placeholders'>): {
  text: string;
  names: string[];
} {
  const { pieces, placeholders } = statement;
  const numbers = new Map<string, number>();
  const names: string[] = [];
  let text = pieces[0] ?? '';
  for (let i = 0; i < placeholders.length; i++) {
    const name = placeholders[i] as string;
    let number = numbers.get(name);
    if (number === undefined) {
      number = names.push(name);
      numbers.set(name, number);
    }
    text += `$${number}${pieces[i + 1]}`;
  }
  return { text, names };
}

/** The driver's own statements, in the same SQL as every other. */
const ping = statement('ping', sql`SELECT 1 AS ok`);

// Date types as Oracle's ALL_TAB_COLUMNS spells them (DATE, TIMESTAMP(6), TIMESTAMP(6)
// WITH TIME ZONE): what oracle:check and the start-up line print.
const columnsOfViews = (views: readonly string[]) =>
  query(
    'dictionary.columns',
    sql`SELECT upper(table_name) AS view_name, upper(column_name) AS column_name,
       CASE WHEN domain_name = 'date' THEN 'DATE'
         WHEN data_type = 'timestamp without time zone' THEN 'TIMESTAMP(' || datetime_precision || ')'
         WHEN data_type = 'timestamp with time zone' THEN 'TIMESTAMP(' || datetime_precision || ') WITH TIME ZONE'
         ELSE upper(data_type) END AS data_type
     FROM information_schema.columns
     WHERE table_schema = 'public' AND upper(table_name) = ANY (string_to_array(${sql.bind('views', views.join(','))}, ','))`,
    (row) => row,
  );

/** Where the driver's statements run: PGlite on this thread, or in a worker thread. */
export interface StatementRunner {
  rows(text: string, params: BindValue[], maxRows: number | undefined): Promise<ArrayRows>;
  close(): Promise<void>;
}

export class EmbeddedDriver implements Driver {
  readonly kind = 'embedded' as const;

  constructor(
    private readonly statements: StatementRunner,
    private readonly latencyMs: number,
  ) {}

  async query(statement: Statement, binds: Binds = {}, options: QueryOptions = {}): Promise<Row[]> {
    return this.run(statement, binds, options);
  }

  async queryWithAgentDetails(
    statement: Statement,
    binds: Binds = {},
    options: QueryOptions = {},
  ): Promise<Row[]> {
    return this.run(
      enclosed(
        statement,
        `SELECT q.*, ${describedForSessionUser('emb_describe_agent_or_null(q.agent_name)')} AS agent_details FROM (`,
        `) q${outerOrder(statement)}`,
      ),
      binds,
      options,
    );
  }

  /**
   * A statement sent to PGlite cannot be cancelled: with `options`, the driver stops waiting
   * for it when the time runs out or the caller goes away. Interrupted during the modelled
   * latency, it is never sent, as Oracle's break leaves no completed execution behind.
   */
  async runBlock(block: Block, binds: Binds, options: CallOptions = {}): Promise<Row> {
    const { signal, timeoutMs } = options;
    if (!signal && timeoutMs === undefined)
      return this.firstRow(block, this.run(block.embedded, binds));
    if (signal?.aborted) throw new CallInterrupted('cancelled');
    const stop = new AbortController();
    let reject: (error: CallInterrupted) => void = () => {};
    const interrupted = new Promise<never>((_, r) => {
      reject = r;
    });
    const interrupt = (error: CallInterrupted) => {
      reject(error);
      stop.abort(error);
    };
    const onAbort = () => interrupt(new CallInterrupted('cancelled'));
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => interrupt(new CallInterrupted('timeout', timeoutMs)), timeoutMs);
    const work = this.run(block.embedded, binds, {}, stop.signal);
    // Whichever loses the race must not become an unhandled rejection.
    work.catch(() => undefined);
    try {
      return await this.firstRow(block, Promise.race([work, interrupted]));
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private async firstRow(block: Block, rows: Promise<Row[]>): Promise<Row> {
    const [row] = await rows;
    if (!row) throw new Error(`${block.name} returned no row`);
    return row;
  }

  /** The same wrapper over one row; the emulation is always there to call. */
  async probeAgentDetails(): Promise<AgentDetailsProbe> {
    await this.queryWithAgentDetails(describeAgentProbe.statement);
    return { callable: true, reason: null };
  }

  async columnsOf(views: readonly string[]): Promise<Map<string, ViewColumns>> {
    const { statement, binds } = columnsOfViews(views);
    const rows = await this.run(statement, binds);
    const columns = new Map<string, ViewColumns>();
    for (const row of rows) {
      const view = String(row.viewName);
      const types = columns.get(view) ?? new Map<string, string>();
      types.set(String(row.columnName), String(row.dataType));
      columns.set(view, types);
    }
    return columns;
  }

  async ping(): Promise<void> {
    await this.run(ping, {});
  }

  close(): Promise<void> {
    return this.statements.close();
  }

  private async run(
    statement: Statement,
    binds: Binds,
    options: QueryOptions = {},
    signal?: AbortSignal,
  ): Promise<Row[]> {
    if (this.latencyMs > 0) await sleep(this.latencyMs, undefined, signal ? { signal } : {});
    if (signal?.aborted) throw new CallInterrupted('cancelled');
    const { text, names } = numbered(built(statement));
    const params = names.map((name) => {
      if (!(name in binds)) throw new Error(`missing bind :${name}`);
      const value = binds[name];
      // Oracle stores and compares a zero-length string as NULL: so does the embedded
      // database, or a test would pass on a '' that matches nothing on Oracle.
      return value === '' ? null : (value ?? null);
    });
    // Oracle rejects a bind the text does not use (NJS-098); failing here too keeps a
    // statement that only PostgreSQL would accept out of the tests.
    const used = new Set(names);
    const unused = Object.keys(binds).filter((name) => !used.has(name));
    if (unused.length > 0) throw new Error(`unused bind :${unused.join(', :')}`);
    const { columns, rows } = await this.statements.rows(text, params, options.maxRows);
    return normalizeRows(columns, rows);
  }
}
