/**
 * The worker thread's side of the embedded database (see worker.ts): PGlite and its row
 * decoding run here, on the second core, while the serving thread executes GraphQL.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { messages, type PGlite, type QueryOptions, type Transaction } from '@electric-sql/pglite';
import type { EmbeddedDatabaseConfig } from '../../config.js';
import type { BindValue } from '../driver.js';
import { type EmbeddedStatements, openPGlite } from './database.js';
import { PreparedStatements } from './prepared.js';
import { keepPristine, type Pristine, resetToPristine } from './reuse.js';

export type Request =
  | {
      readonly op: 'rows';
      readonly text: string;
      readonly params: BindValue[];
      readonly maxRows?: number;
    }
  | {
      readonly op: 'query';
      readonly text: string;
      readonly params?: unknown[];
      readonly options?: QueryOptions;
      readonly tx?: number;
    }
  | {
      readonly op: 'exec';
      readonly text: string;
      readonly options?: QueryOptions;
      readonly tx?: number;
    }
  | { readonly op: 'begin' }
  | { readonly op: 'end'; readonly tx: number; readonly commit: boolean }
  | { readonly op: 'reset'; readonly config: EmbeddedDatabaseConfig }
  | { readonly op: 'close' };

/** An error as it crosses the thread boundary: its message, stack and own fields. */
export interface ThreadError {
  /** Raised by PostgreSQL (a pglite `messages.DatabaseError`), with code, severity, position… */
  readonly database: boolean;
  readonly name: string;
  readonly message: string;
  readonly stack: string | undefined;
  readonly fields: Record<string, unknown>;
}

export type Reply =
  | { readonly id: number; readonly value: unknown }
  | { readonly id: number; readonly error: ThreadError };

export type Notice =
  | { readonly log: 'warn'; readonly message: string }
  | { readonly log: 'info'; readonly fields: Record<string, unknown>; readonly message: string }
  | { readonly ready: { readonly fromSnapshot: boolean } }
  | { readonly failed: ThreadError };

export interface ThreadData {
  readonly config: EmbeddedDatabaseConfig;
  /** When the serving thread started this one (epoch ms, sub-millisecond): for `threadMs`. */
  readonly spawnedAt: number;
  /** The serving thread's compiledPGliteWasm() (database.ts). */
  readonly wasm: WebAssembly.Module;
  /** The serving thread's snapshotFile() (database.ts). */
  readonly snapshotPath: string;
  /** Keeps a copy of the tables as loaded, so that `reset` can put them back (reuse.ts). */
  readonly reusable?: boolean;
}

/** The thread's PGlite and what its session holds. */
interface Session {
  readonly pg: PGlite;
  prepared: PreparedStatements;
  readonly transactions: Map<number, OpenTransaction>;
  readonly pristine: Pristine | undefined;
  /** Requests begun and not yet answered (served, serve). */
  inProgress: number;
}

/** A transaction the serving thread began, waiting for its statements and its end. */
interface OpenTransaction {
  readonly tx: Transaction;
  /** Ends the transaction's callback: returns to commit, rejects to roll back. */
  readonly finish: (commit: boolean) => void;
  /** Settles once PGlite has committed or rolled back. */
  readonly finished: Promise<void>;
}

/** The rejection that makes PGlite roll back; not an error. */
const ROLLBACK = Symbol('rollback');

export function threadError(error: unknown): ThreadError {
  if (!(error instanceof Error)) {
    return { database: false, name: 'Error', message: String(error), stack: undefined, fields: {} };
  }
  return {
    database: error instanceof messages.DatabaseError,
    name: error.name,
    message: error.message,
    stack: error.stack,
    fields: { ...error },
  };
}

const port = parentPort;
if (port) {
  const post = (message: Reply | Notice) => {
    try {
      port.postMessage(message);
    } catch (error) {
      // A field that cannot be cloned (PGlite puts the query's options on its errors): the
      // message and the code still go across.
      if (!('error' in message)) throw error;
      port.postMessage({ id: message.id, error: { ...message.error, fields: {} } });
    }
  };
  const { config, spawnedAt, wasm, snapshotPath, reusable } = workerData as ThreadData;
  // From the thread's start to its module running (Node's start of a thread, module loading):
  // a part of every start-up line's time that the thread's own clock does not see.
  const threadMs = Math.round(performance.timeOrigin + performance.now() - spawnedAt);
  try {
    let pristine: Pristine | undefined;
    const { pg, fromSnapshot } = await openPGlite(
      config,
      (message) => post({ log: 'warn', message }),
      (fields, message) => post({ log: 'info', fields: { ...fields, threadMs }, message }),
      wasm,
      snapshotPath,
      async (loaded) => {
        if (reusable) pristine = await keepPristine(loaded);
      },
    );
    const session: Session = {
      pg,
      prepared: new PreparedStatements(pg),
      transactions: new Map(),
      pristine,
      inProgress: 0,
    };
    port.on('message', ({ id, request }: { id: number; request: Request }) => {
      // Nothing else is using the session: the statement runs and is answered now, without
      // PGlite's locks (PreparedStatements.rowsNow).
      if (request.op === 'rows' && session.inProgress === 0 && session.transactions.size === 0) {
        let reply: Reply;
        try {
          reply = {
            id,
            value: session.prepared.rowsNow(request.text, request.params, request.maxRows),
          };
        } catch (error) {
          reply = { id, error: threadError(error) };
        }
        post(reply);
        return;
      }
      session.inProgress++;
      serve(session, id, request)
        .then(
          (value) => post({ id, value }),
          (error: unknown) => post({ id, error: threadError(error) }),
        )
        .finally(() => {
          session.inProgress--;
        });
    });
    post({ ready: { fromSnapshot } });
  } catch (error) {
    post({ failed: threadError(error) });
  }
}

async function serve(session: Session, id: number, request: Request): Promise<unknown> {
  const { pg, transactions } = session;
  const on = (tx: number | undefined): EmbeddedStatements => {
    if (tx === undefined) return pg;
    const open = transactions.get(tx);
    if (!open) throw new Error('the transaction has ended');
    return open.tx;
  };
  switch (request.op) {
    case 'rows':
      return session.prepared.rows(request.text, request.params, request.maxRows);
    case 'query':
      return on(request.tx).query(request.text, request.params, request.options);
    case 'exec':
      return on(request.tx).exec(request.text, request.options);
    case 'begin':
      return begin(pg, transactions, id);
    case 'end': {
      const open = transactions.get(request.tx);
      if (!open) throw new Error('the transaction has ended');
      transactions.delete(request.tx);
      open.finish(request.commit);
      return open.finished;
    }
    case 'reset':
      return reset(session, request.config);
    case 'close':
      if (!pg.closed) await pg.close();
      return undefined;
  }
}

/**
 * The database as a new one would open (reuse.ts): a transaction left open is rolled back, and
 * the prepared statements DISCARD ALL deallocates are forgotten. False when it cannot serve
 * again.
 */
async function reset(session: Session, config: EmbeddedDatabaseConfig): Promise<boolean> {
  if (!session.pristine) throw new Error('the embedded database was not opened reusable');
  for (const [tx, open] of session.transactions) {
    session.transactions.delete(tx);
    open.finish(false);
    await open.finished;
  }
  try {
    return await resetToPristine(session.pg, session.pristine, config);
  } finally {
    session.prepared = new PreparedStatements(session.pg);
  }
}

/**
 * Begins a transaction under PGlite's own transaction lock, so that other statements wait for
 * it as they do on one thread; resolves with its number once BEGIN has run.
 */
function begin(pg: PGlite, transactions: Map<number, OpenTransaction>, id: number) {
  return new Promise<number>((begun, failed) => {
    const finished = pg
      .transaction(
        (tx) =>
          new Promise<void>((commit, rollback) => {
            const finish = (commitIt: boolean) => (commitIt ? commit() : rollback(ROLLBACK));
            transactions.set(id, { tx, finish, finished });
            begun(id);
          }),
      )
      .catch((error: unknown) => {
        if (error !== ROLLBACK) throw error;
      });
    // BEGIN failed; once begun, `end` reports how the transaction finished.
    finished.catch(failed);
  });
}
