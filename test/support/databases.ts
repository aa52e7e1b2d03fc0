import type { Results } from '@electric-sql/pglite';
import type { EmbeddedDatabaseConfig } from '../../src/config.js';
import type { BindValue } from '../../src/db/driver.js';
import {
  type DatabaseLost,
  type EmbeddedDatabase,
  EmbeddedDriver,
  type EmbeddedPg,
  type EmbeddedStatements,
  type StartupLog,
  type StatementRunner,
} from '../../src/db/embedded/database.js';
import type { ArrayRows } from '../../src/db/embedded/prepared.js';
import { openEmbeddedWorker, type PGliteThread } from '../../src/db/embedded/worker.js';
import type { OpenDatabase } from '../../src/db/open.js';
import { runInUtc } from '../../src/db/process-zone.js';

/**
 * The embedded databases a worker process's servers share, one server at a time each: a
 * server stopped gives its database back, and the next server gets it reset to the snapshot
 * (src/db/embedded/reuse.ts) instead of loading the snapshot into a new PGlite, about half a
 * second of CPU per server. A database whose schema a test changed, or whose thread died, is
 * closed instead.
 */
const idle: PGliteThread[] = [];

/** More than a file starts at once stay open only until they are handed back. */
const KEPT = 4;

/** Counted since the process started: what a test of the reuse itself compares. */
export const databaseCounts = { opened: 0, reused: 0, discarded: 0 };

/**
 * A database for one server: a reset idle one, else a new reusable one. Its `close` hands it
 * back, after which it serves nothing more to that server, as a closed database would.
 */
export async function leaseDatabase(
  config: EmbeddedDatabaseConfig,
  warn: (message: string) => void = () => {},
  log: StartupLog = () => {},
): Promise<OpenDatabase & { readonly embedded: EmbeddedDatabase }> {
  // As src/db/open.ts does before a database starts.
  runInUtc();
  for (let thread = idle.pop(); thread; thread = idle.pop()) {
    if (!thread.closed && (await thread.reset(config).catch(() => false))) {
      databaseCounts.reused++;
      return leased(thread, config, true);
    }
    databaseCounts.discarded++;
    await thread.close();
  }
  const opened = await openEmbeddedWorker(config, warn, log, true);
  databaseCounts.opened++;
  return leased(opened.pg, config, opened.fromSnapshot);
}

function leased(
  thread: PGliteThread,
  config: EmbeddedDatabaseConfig,
  fromSnapshot: boolean,
): OpenDatabase & { readonly embedded: EmbeddedDatabase } {
  const lease = new Lease(thread);
  const driver = new EmbeddedDriver(lease, config.latencyMs);
  return { driver, embedded: { driver, pg: lease, fromSnapshot, lost: lease.lost } };
}

/** The thread for one server, until the server closes it. */
class Lease implements EmbeddedPg, StatementRunner {
  /** The thread's loss, while this server holds it. */
  readonly lost: Promise<DatabaseLost>;
  private released = false;

  constructor(private readonly thread: PGliteThread) {
    this.lost = new Promise((resolve) => {
      void thread.lost.then((why) => {
        if (!this.released) resolve(why);
      });
    });
  }

  get closed(): boolean {
    return this.released || this.thread.closed;
  }

  rows(text: string, params: BindValue[], maxRows: number | undefined): Promise<ArrayRows> {
    return this.held(() => this.thread.rows(text, params, maxRows));
  }

  query<T>(...args: Parameters<PGliteThread['query']>): Promise<Results<T>> {
    return this.held(() => this.thread.query<T>(...args));
  }

  exec(...args: Parameters<PGliteThread['exec']>): Promise<Results[]> {
    return this.held(() => this.thread.exec(...args));
  }

  transaction<T>(callback: (tx: EmbeddedStatements) => Promise<T>): Promise<T> {
    return this.held(() => this.thread.transaction(callback));
  }

  async close(): Promise<void> {
    if (this.released) return;
    this.released = true;
    if (this.thread.closed) return;
    if (idle.length < KEPT) idle.push(this.thread);
    else await this.thread.close();
  }

  private held<T>(run: () => Promise<T>): Promise<T> {
    return this.closed ? Promise.reject(new Error('PGlite is closed')) : run();
  }
}
