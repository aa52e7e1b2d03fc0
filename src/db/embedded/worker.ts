import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { messages, type QueryOptions, type Results } from '@electric-sql/pglite';
import type * as esbuild from 'esbuild';
import type { EmbeddedDatabaseConfig } from '../../config.js';
import type { BindValue } from '../driver.js';
import {
  compiledPGliteWasm,
  type DatabaseLost,
  type EmbeddedDatabase,
  EmbeddedDriver,
  type EmbeddedPg,
  type EmbeddedStatements,
  type StartupLog,
  type StatementRunner,
  snapshotFile,
} from './database.js';
import type { ArrayRows } from './prepared.js';
import type { Notice, Reply, Request, ThreadData, ThreadError } from './worker-thread.js';

/**
 * The embedded database in a worker thread (EMBEDDED_WORKER): PostgreSQL's WebAssembly and
 * PGlite's row decoding, most of a dashboard's CPU, run on a second core while the serving
 * thread executes GraphQL. Rows come back as arrays with their column names once per statement
 * (structured clone), and the same driver keys them; the simulator and the tests reach PGlite
 * through a stand-in with the part of its interface they use.
 */
export async function openEmbeddedWorker(
  config: EmbeddedDatabaseConfig,
  warn: (message: string) => void = () => {},
  log: StartupLog = () => {},
  /** Opened for PGliteThread.reset (reuse.ts). */
  reusable = false,
): Promise<EmbeddedDatabase<PGliteThread>> {
  const wasm = await compiledPGliteWasm();
  const spawnedAt = performance.timeOrigin + performance.now();
  const thread = new PGliteThread(
    { config, spawnedAt, wasm, snapshotPath: snapshotFile(config.cacheDir), reusable },
    warn,
    log,
  );
  const fromSnapshot = await thread.ready;
  return {
    driver: new EmbeddedDriver(thread, config.latencyMs),
    pg: thread,
    fromSnapshot,
    lost: thread.lost,
  };
}

interface Waiting {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export class PGliteThread implements EmbeddedPg, StatementRunner {
  /** Resolves with whether the data directory came from the snapshot, once PGlite is open. */
  readonly ready: Promise<boolean>;
  /** Resolves when the thread ends without close(): every statement from then on fails. */
  readonly lost: Promise<DatabaseLost>;
  readonly worker: Worker;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  private exited = false;
  private closing: Promise<void> | undefined;

  constructor(data: ThreadData, warn: (message: string) => void, log: StartupLog) {
    this.worker = startThread(data);
    let lose: (lost: DatabaseLost) => void = () => {};
    this.lost = new Promise((resolve) => {
      lose = resolve;
    });
    this.ready = new Promise<boolean>((resolve, reject) => {
      this.worker.on('message', (message: Reply | Notice) => {
        if ('id' in message) this.settle(message);
        else if ('ready' in message) {
          resolve(message.ready.fromSnapshot);
          if (this.waiting.size === 0) this.worker.unref();
        } else if ('failed' in message) {
          reject(revive(message.failed));
          void this.worker.terminate();
        } else if (message.log === 'warn') warn(message.message);
        else log(message.fields, message.message);
      });
      let failure: Error | undefined;
      this.worker.on('error', (error) => {
        failure = error;
      });
      this.worker.on('exit', (code) => {
        this.exited = true;
        const error = this.closing
          ? new Error('PGlite is closed')
          : (failure ?? new Error(`the embedded database thread exited with code ${code}`));
        reject(error);
        if (!this.closing) lose({ exitCode: code, error });
        for (const waiting of this.waiting.values()) waiting.reject(error);
        this.waiting.clear();
      });
    });
  }

  get closed(): boolean {
    return this.exited;
  }

  rows(text: string, params: BindValue[], maxRows: number | undefined): Promise<ArrayRows> {
    return this.request({ op: 'rows', text, params, maxRows });
  }

  query<T>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> {
    return this.request({ op: 'query', text, params, options });
  }

  exec(text: string, options?: QueryOptions): Promise<Results[]> {
    return this.request({ op: 'exec', text, options });
  }

  /** Runs in the thread under PGlite's transaction lock; the callback's statements go to it. */
  async transaction<T>(callback: (tx: EmbeddedStatements) => Promise<T>): Promise<T> {
    const tx = await this.request<number>({ op: 'begin' });
    const statements: EmbeddedStatements = {
      query: (text, params, options) => this.request({ op: 'query', text, params, options, tx }),
      exec: (text, options) => this.request({ op: 'exec', text, options, tx }),
    };
    let result: T;
    try {
      result = await callback(statements);
    } catch (error) {
      await this.request({ op: 'end', tx, commit: false });
      throw error;
    }
    await this.request({ op: 'end', tx, commit: true });
    return result;
  }

  /**
   * Once the statements already sent have run, the database as a new one would open with
   * `config` (reuse.ts); false when a statement changed its schema and it must not serve
   * again. Only for a thread opened reusable.
   */
  reset(config: EmbeddedDatabaseConfig): Promise<boolean> {
    return this.request({ op: 'reset', config });
  }

  /** PGlite closes once the statements already sent have run; then the thread ends. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.exited) return;
      await this.request({ op: 'close' }).catch(() => undefined);
      await this.worker.terminate();
      this.exited = true;
    })();
    return this.closing;
  }

  private request<T>(request: Request): Promise<T> {
    if (this.exited) return Promise.reject(new Error('PGlite is closed'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      // Only statements in progress keep the process alive, as they would on one thread.
      if (this.waiting.size === 0) this.worker.ref();
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      try {
        this.worker.postMessage({ id, request });
      } catch (error) {
        // A bind value that cannot be cloned.
        this.take(id);
        reject(error);
      }
    });
  }

  private settle(reply: Reply): void {
    const waiting = this.take(reply.id);
    if ('error' in reply) waiting?.reject(revive(reply.error));
    else waiting?.resolve(reply.value);
  }

  private take(id: number): Waiting | undefined {
    const waiting = this.waiting.get(id);
    this.waiting.delete(id);
    if (this.waiting.size === 0) this.worker.unref();
    return waiting;
  }
}

/** The thread's module: compiled JavaScript beside this file, or TypeScript under tsx or vitest. */
function startThread(workerData: ThreadData): Worker {
  const entry = new URL(
    `./worker-thread${extname(new URL(import.meta.url).pathname)}`,
    import.meta.url,
  );
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, { workerData });
  // Evaluated, as a script that imports the bundle: a thread started from a file takes its
  // process's flags, and a process started with `--input-type` (an `-e` script) refuses that.
  return new Worker(`import(${JSON.stringify(bundledThread(entry).href)})`, {
    eval: true,
    workerData,
  });
}

let bundled: URL | undefined;

/**
 * The thread's TypeScript module graph as one JavaScript file, bundled by esbuild once per
 * process into node_modules/.cache/agent-graph/thread/ (packages stay imports, resolved from
 * the project's node_modules). A worker does not inherit tsx's module hooks, and registering
 * them in each thread starts a hooks thread of its own that compiles every module again: about
 * 0.4 s of CPU per database, paid by each of the servers a test run starts. Only tsx and
 * vitest get here, and esbuild comes with them.
 */
function bundledThread(entry: URL): URL {
  if (bundled) return bundled;
  const { buildSync } = createRequire(import.meta.url)('esbuild') as typeof esbuild;
  const [output] = buildSync({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    packages: 'external',
    format: 'esm',
    platform: 'node',
    target: 'node22',
    write: false,
    logLevel: 'warning',
  }).outputFiles;
  if (!output) throw new Error(`esbuild wrote nothing for ${entry.href}`);
  const dir = fileURLToPath(
    new URL('../../../node_modules/.cache/agent-graph/thread/', import.meta.url),
  );
  const name = `${createHash('sha256').update(output.contents).digest('hex').slice(0, 16)}.mjs`;
  const path = join(dir, name);
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true });
    // Written aside and renamed: a process starting beside this one sees all of it or none.
    const writing = `${path}.${process.pid}.tmp`;
    writeFileSync(writing, output.contents);
    renameSync(writing, path);
    // Bundles of earlier sources written over an hour ago (a process may still be starting one).
    for (const old of readdirSync(dir)) {
      const stale = join(dir, old);
      if (old !== name && statSync(stale).mtimeMs < Date.now() - 3_600_000)
        rmSync(stale, { force: true });
    }
  }
  bundled = pathToFileURL(path);
  return bundled;
}

/** The error as the thread raised it: a PostgreSQL error keeps its class, code and fields. */
function revive({ database, name, message, stack, fields }: ThreadError): Error {
  const error: Error = database
    ? new messages.DatabaseError(message, Number(fields.length ?? 0), name as messages.MessageName)
    : new Error(message);
  if (error.name !== name) error.name = name;
  return Object.assign(error, fields, { stack });
}
