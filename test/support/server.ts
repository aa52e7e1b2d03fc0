import pino, { type Logger } from 'pino';
import { loadConfig } from '../../src/config.js';
import { type AgentGraphServer, createServer } from '../../src/server.js';

export interface TestServer {
  readonly server: AgentGraphServer;
  /** Base URL of the listening server (http://127.0.0.1:port). */
  readonly url: string;
  /** Runs an operation in process through yoga's fetch, as a client would over HTTP. */
  gql<T = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
  ): Promise<GqlResult<T>>;
  /** Statements issued while `run` executes. */
  countStatements(run: () => Promise<unknown>): Promise<number>;
  stop(): Promise<void>;
}

export interface GqlResult<T> {
  readonly status: number;
  readonly data: T | null | undefined;
  readonly errors:
    | { message: string; path?: string[]; extensions?: { code?: string; [key: string]: unknown } }[]
    | undefined;
}

/** One server per test file (PGlite takes about a second to load); env overrides config. */
export async function startTestServer(
  env: Record<string, string> = {},
  logger: Logger = pino({ level: 'silent' }),
): Promise<TestServer> {
  const config = loadConfig({ PORT: '0', SIMULATE: 'false', ...env });
  const server = await createServer(config, logger);
  const url = await server.start();
  return {
    server,
    url,
    async gql(query, variables) {
      const response = await server.yoga.fetch('http://localhost/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await response.json()) as { data?: never; errors?: never };
      return { status: response.status, data: body.data, errors: body.errors };
    },
    async countStatements(run) {
      const before = await server.metrics.statementCount();
      await run();
      return (await server.metrics.statementCount()) - before;
    },
    stop: () => server.stop(100),
  };
}
