import { parseCommand } from './command-line.js';
import { ConfigError, isLoopback, loadConfig } from './config.js';
import { openLoggedDatabase } from './db/open.js';
import { StartupError } from './errors.js';
import { type EarlyListener, listenEarly } from './listen.js';
import { createLogger, logDestination, withRedaction } from './logger.js';

// Only the modules above load before the port is taken and the first line printed; the
// server's (GraphQL, yoga, the schema: most of a start's module loading) load after, while
// the database opens beside them (in its worker thread, on the other core).

parseCommand({
  name: 'npm start',
  synopsis: '',
  about: `Starts agent-graph: GraphQL (and GraphiQL) at /graphql, the operators' console at
/console, /health, /ready and /metrics, on Oracle when ORACLE_CONNECT_STRING is set, else on
the embedded database with demo data. All configuration is environment variables, listed in
README.md (Configuration); a bad value stops the start with every problem listed.
npm run dev starts it with NODE_ENV=development.`,
  environment: {
    'HOST, PORT': 'where to listen (default 127.0.0.1, 4000)',
    LOG_LEVEL: 'fatal … trace, or silent (default info)',
    LOG_FORMAT: 'json, pretty, or auto: pretty on a terminal (default auto)',
    NODE_ENV: 'development: administrators see each operation’s statements',
  },
});

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`agent-graph: ${error.message}\n`);
  process.exit(1);
}

let destination: Awaited<ReturnType<typeof logDestination>>;
try {
  destination = await logDestination(config.logFormat);
} catch (error) {
  process.stderr.write(`agent-graph: ${(error as Error).message}\n`);
  process.exit(1);
}
const logger = createLogger(
  { level: config.logLevel, base: { service: 'agent-graph' } },
  destination,
);

let listener: EarlyListener | undefined;
try {
  listener = await listenEarly(config);
  logger.info(
    { url: listener.url, database: config.database.kind, ms: Math.round(performance.now()) },
    `agent-graph starting on ${listener.url}: loading the server and the ${config.database.kind} database`,
  );
  const database = openLoggedDatabase(config.database, withRedaction(logger));
  // Where a start's time went, in the ready line (bench/start-time.ts reads it): ms since
  // the process started.
  let databaseMs: number | undefined;
  // Reported by createServer, which awaits it; this only keeps an early failure from being
  // reported twice, as an unhandled rejection too.
  database.then(
    () => {
      databaseMs = Math.round(performance.now());
    },
    () => undefined,
  );
  const loading = performance.now();
  const { createServer } = await import('./server.js');
  const modulesMs = Math.round(performance.now() - loading);
  const server = await createServer(config, logger, { listener, database });
  const url = await server.start();
  logger.info(
    {
      url: `${url}/graphql`,
      console: `${url}/console`,
      database: config.database.kind,
      // Since the process started, module loading included.
      readyMs: Math.round(performance.now()),
      // The server's modules (loaded while the database opens), and when the database was open.
      modulesMs,
      databaseMs,
    },
    `agent-graph ready at ${url}/graphql (GraphiQL); the operators' console at ${url}/console`,
  );
  if (!config.auth.jwt) {
    logger.warn(
      { host: config.host, allowAnonymous: config.auth.allowAnonymous },
      config.auth.allowAnonymous && !isLoopback(config.host)
        ? `ALLOW_ANONYMOUS=true: no authentication on ${config.host}, every caller is an administrator`
        : 'no authentication configured: every caller is an administrator (loopback only)',
    );
  }
  let signals = 0;
  const shutdown = (signal: string) => {
    if (++signals > 1) process.exit(1);
    logger.info({ signal }, 'shutting down');
    server.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // Nothing serves without the database: exit, and the supervisor (or the image's
  // HEALTHCHECK, /health being 503 meanwhile) starts a fresh process from the snapshot.
  void server.databaseLost.then(() => {
    void server.stop(1_000).finally(() => process.exit(1));
  });
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
} catch (error) {
  await listener?.close();
  if (error instanceof StartupError) {
    process.stderr.write(`agent-graph: ${error.message}\n`);
    process.exit(1);
  }
  logger.fatal(
    { err: error },
    `agent-graph could not start: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
}
