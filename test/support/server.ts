import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import type { Clock } from '../../src/model/clock.js';
import { type AgentGraphServer, createServer } from '../../src/server.js';
import { leaseDatabase } from './databases.js';

export interface TestServer {
  readonly server: AgentGraphServer;
  /** Base URL of the listening server (http://127.0.0.1:port). */
  readonly url: string;
  /** What the server logged (pino's JSON lines, parsed), oldest first. */
  readonly logs: readonly LogEntry[];
  /** Runs an operation in process through yoga's fetch, as a client would over HTTP. */
  gql<T = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
  ): Promise<GqlResult<T>>;
  /** Runs an operation over the server's socket, with optional extra request headers. */
  post<T = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<GqlResult<T> & { readonly text: string }>;
  /** Statements issued while `run` executes. */
  countStatements(run: () => Promise<unknown>): Promise<number>;
  stop(): Promise<void>;
}

export interface LogEntry {
  readonly level: number;
  readonly msg: string;
  readonly [key: string]: unknown;
}

export interface GqlError {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string; [key: string]: unknown };
}

export interface GqlResult<T> {
  readonly status: number;
  readonly data: T | null | undefined;
  readonly errors: GqlError[] | undefined;
}

/** Where the global setup builds the snapshot: the databases the servers share open from it. */
const SNAPSHOT_DIR = ((database) => database.kind === 'embedded' && database.cacheDir)(
  loadConfig({}).database,
);

/**
 * A server on its own port; env overrides config, and `clock` replaces the system's for tokens
 * (test/support/clock.ts). Its embedded database is one the worker's servers share in turn,
 * reset between them (test/support/databases.ts), unless `ownDatabase` (a test that needs the
 * thread itself) or a configuration of the database's own (EMBEDDED_WORKER=false,
 * EMBEDDED_CACHE_DIR) asks for a new one.
 */
export async function startTestServer(
  env: Record<string, string> = {},
  { clock, ownDatabase = false }: { clock?: Clock; ownDatabase?: boolean } = {},
): Promise<TestServer> {
  const config = loadConfig({ PORT: '0', SIMULATE: 'false', ...env });
  const logs: LogEntry[] = [];
  const logger = pino(
    { level: config.logLevel === 'silent' ? 'info' : config.logLevel },
    { write: (line: string) => logs.push(JSON.parse(line)) },
  );
  const { database } = config;
  const shared =
    !ownDatabase &&
    database.kind === 'embedded' &&
    database.worker &&
    database.cacheDir === SNAPSHOT_DIR;
  const server = await createServer(config, logger, {
    ...(clock ? { clock } : {}),
    ...(shared
      ? {
          database: leaseDatabase(
            database,
            (message) => logger.warn(message),
            (fields, message) => logger.info(fields, message),
          ),
        }
      : {}),
  });
  const url = await server.start();
  return {
    server,
    url,
    logs,
    async gql(query, variables) {
      const response = await server.yoga.fetch('http://localhost/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await response.json()) as { data?: never; errors?: never };
      return { status: response.status, data: body.data, errors: body.errors };
    },
    async post(query, variables, headers = {}) {
      const response = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      const text = await response.text();
      const body = JSON.parse(text) as { data?: never; errors?: never };
      return { status: response.status, data: body.data, errors: body.errors, text };
    },
    async countStatements(run) {
      const before = await server.metrics.statementCount();
      await run();
      return (await server.metrics.statementCount()) - before;
    },
    stop: () => server.stop(100),
  };
}
