import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import type { A2AStandin } from './a2a/standin.js';
import { startA2A } from './a2a/start.js';
import { authFailureRecorder } from './auth/failures.js';
import { createAuthenticator } from './auth/jwt.js';
import type { Config } from './config.js';
import { CONSOLE_MANIFEST, CONSOLE_PATH, createConsoleAssets } from './console/serve.js';
import type { OperationUsage } from './context.js';
import { dateColumnTypes, missingViews } from './db/catalog.js';
import { discoverDatabase } from './db/discover.js';
import { countStatements, type Driver } from './db/driver.js';
import type { DatabaseLost } from './db/embedded/database.js';
import { Simulator } from './db/embedded/simulator.js';
import { type OpenDatabase, openLoggedDatabase } from './db/open.js';
import { logStatement } from './db/statement-log.js';
import { type AppError, notFound } from './errors.js';
import { graphiqlPage } from './graphiql.js';
import { browserGuard, HOST_REFUSED } from './hardening/origin.js';
import { homePage } from './home.js';
import { type EarlyListener, listenError } from './listen.js';
import { createLiveHub, type LiveHub } from './live/hub.js';
import { withRedaction } from './logger.js';
import { createMaskError, type HttpReply, maskedReply } from './masking.js';
import { Metrics } from './metrics.js';
import type { Clock } from './model/clock.js';
import { ANONYMOUS_ADMIN, type Viewer } from './model/viewer.js';
import { createProduction, trustedManifest } from './production/index.js';
import type { ActionOptions } from './repositories/actions.js';
import { CatalogCache } from './repositories/catalog-cache.js';
import type { Repositories } from './repositories/create.js';
import { createRepositories } from './repositories/create.js';
import { IdempotentCalls } from './repositories/idempotent-calls.js';
import { TeamHistoryRepository } from './repositories/team-history.js';
import { TeamRepository } from './repositories/teams.js';
import { requestIdOfMessage } from './request-id.js';
import { schema as clientSchema, subgraphSchema } from './schema/index.js';
import { startTracing, type Tracing } from './tracing/index.js';
import { attachGraphqlWs } from './transport/websocket.js';
import { type AgentGraphYoga, createAgentGraphYoga } from './yoga.js';

export interface AgentGraphServer {
  readonly config: Config;
  readonly metrics: Metrics;
  readonly yoga: AgentGraphYoga;
  readonly database: OpenDatabase;
  /** Repositories limited to what the viewer may see. */
  repositoriesFor(viewer: Viewer, usage?: OperationUsage): Repositories;
  /** The driver every repository uses, counted by agentgraph_db_statements_total. */
  readonly driver: Driver;
  /** The embedded A2A stand-in, when A2A_BASE_URL is unset in embedded mode. */
  readonly a2aStandin: A2AStandin | undefined;
  /** Live subscriptions: the poller and its message bus. */
  readonly live: LiveHub;
  /** Present in embedded mode with SIMULATE on. */
  readonly simulator: Simulator | undefined;
  /** Present when OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  readonly tracing: Tracing | undefined;
  /**
   * Settles, once logged, when the database can no longer serve (the embedded worker thread
   * exited): `/health` is 503 from then on, and src/main.ts exits for a supervisor to restart.
   */
  readonly databaseLost: Promise<DatabaseLost>;
  /** Listens on config.host:config.port (0 picks a free port); resolves to the base URL. */
  start(): Promise<string>;
  /**
   * Stops accepting, closes WebSocket clients and ends subscriptions, stops the poller and
   * the simulator, lets in-flight requests finish (up to drainMs), then closes the database.
   */
  stop(drainMs?: number): Promise<void>;
}

export interface ServerOptions {
  /** The port, taken early by src/main.ts (src/listen.ts); without it start() listens. */
  readonly listener?: EarlyListener;
  /** The database, opening since before the modules loaded; without it createServer opens it. */
  readonly database?: Promise<OpenDatabase>;
  /** What tokens are verified and expire by (src/model/clock.ts); the system's when absent. */
  readonly clock?: Clock;
}

export async function createServer(
  config: Config,
  processLogger: Logger,
  options: ServerOptions = {},
): Promise<AgentGraphServer> {
  const logger = withRedaction(processLogger);
  const schema = config.production.federation ? subgraphSchema() : clientSchema;
  // Before the database opens: a bad manifest is a configuration error, reported at once.
  const manifest = trustedManifest(config.production, schema, CONSOLE_MANIFEST);
  const metrics = new Metrics({ processMetrics: true });
  const tracing = await startTracing(config.tracing, logger);
  const database = await (options.database ?? openLoggedDatabase(config.database, logger));
  let lost: DatabaseLost | undefined;
  const databaseLost = (database.embedded?.lost ?? new Promise<never>(() => {})).then((why) => {
    lost = why;
    logger.error(
      { exitCode: why.exitCode, err: why.error },
      `the embedded database's worker thread exited with code ${why.exitCode}: every query fails from now on`,
    );
    return why;
  });
  if (database.driver.poolStatistics) {
    metrics.observeDatabasePool(() => database.driver.poolStatistics?.() ?? null);
  }
  const driver = countStatements(
    tracing ? tracing.traceDriver(database.driver) : database.driver,
    ({ name }) => {
      metrics.dbStatements.inc({ statement: name });
      const end = metrics.dbStatementDuration.startTimer({ statement: name });
      return () => {
        end();
      };
    },
  );
  const { catalog, session, agentDetails, executeAgent, durationMs } = await discoverDatabase(
    driver,
    config.database.viewScope,
  );
  logger.info(
    {
      sessionUser: session.sessionUser,
      currentSchema: session.currentSchema,
      timeZone: session.timeZoneOffset,
      describeAgentCallable: agentDetails.callable,
      executeAgent: executeAgent.missing ?? {
        overloads: executeAgent.signatures,
        traces: executeAgent.traced !== null,
      },
      dateColumns: Object.fromEntries(dateColumnTypes(catalog)),
      discoveryMs: durationMs,
    },
    `database discovered in ${durationMs} ms: session user ${session.sessionUser}, DBMS_AI_AGENT.DESCRIBE_AGENT ${
      agentDetails.callable ? 'callable' : `not callable (${agentDetails.reason})`
    }`,
  );
  if (session.currentSchema !== session.sessionUser) {
    logger.warn(
      { sessionUser: session.sessionUser, currentSchema: session.currentSchema },
      `unqualified names resolve in schema ${session.currentSchema}, but USER_ views show the rows of ${session.sessionUser}`,
    );
  }
  for (const view of missingViews(catalog)) {
    logger.warn(
      { view: view.name, grant: view.grant },
      `view ${view.name} is missing or not granted; fields that need it will fail`,
    );
  }
  const a2a = await startA2A(config, {
    logger,
    metrics,
    // The stand-in plays Oracle's A2A server, which publishes every team of the database.
    teams: new TeamRepository(driver, catalog, ANONYMOUS_ADMIN),
  });
  const audit = logger.child({ component: 'audit' });
  if (executeAgent.missing) logger.warn(`executeAgent is unavailable: ${executeAgent.missing}`);
  const actions: ActionOptions = {
    authenticated: Boolean(config.auth.jwt),
    executeAgent,
    executeAgentTimeoutMs: config.executeAgent.timeoutMs,
    runTeamCalls: new IdempotentCalls(),
    audit: ({ viewer, outcome, ...entry }) => {
      if (entry.action === 'respondToHuman') metrics.humanResponses.inc({ outcome });
      if (entry.action === 'executeAgent') metrics.agentExecutions.inc({ outcome });
      audit.info(
        {
          ...entry,
          outcome,
          viewer: viewer.subject ?? viewer.owner ?? 'anonymous',
          admin: viewer.admin,
        },
        `${entry.action} ${outcome}`,
      );
    },
  };
  const catalogCache = new CatalogCache(config.teamToolsCacheTtlMs);
  const repositoriesFor = (viewer: Viewer, usage?: OperationUsage) =>
    createRepositories(
      usage
        ? countStatements(driver, (sent) => {
            usage.stopped?.throwIfAborted();
            usage.statements++;
            return usage.log ? logStatement(usage.log, sent) : undefined;
          })
        : driver,
      catalog,
      viewer,
      actions,
      catalogCache,
    );
  // One poller per process reads every run; each subscription filters for its viewer.
  const live = createLiveHub({
    config: config.live,
    source: new TeamHistoryRepository(driver, catalog, ANONYMOUS_ADMIN),
    metrics,
    logger: logger.child({ component: 'live' }),
  });
  const maskError = createMaskError(logger, metrics);
  const authenticate = createAuthenticator(config.auth, options.clock);
  const viewers = new WeakMap<Request, Viewer>();
  const production = createProduction({
    config,
    schema,
    manifest,
    viewers,
    live,
    metrics,
    logger,
  });
  const graphiql = graphiqlPage(CONSOLE_PATH, config.http.introspection);
  const home = homePage({ graphql: '/graphql', console: CONSOLE_PATH });
  const yoga = createAgentGraphYoga({
    graphiql,
    schema,
    repositoriesFor,
    authenticate,
    viewers,
    statsPublic: config.auth.statsPublic,
    logger,
    metrics,
    live,
    pollIntervalMs: config.live.pollIntervalMs,
    a2a: a2a.cards,
    maskError,
    limits: config.limits,
    rateLimit: config.rateLimit,
    http: config.http,
    production,
    development: config.development,
    tracing,
  });
  const simulator =
    database.embedded && config.live.simulate
      ? new Simulator(database.embedded.pg, {
          periodMs: config.live.simulatePeriodMs,
          logger: logger.child({ component: 'simulator' }),
        })
      : undefined;

  const consoleAssets = createConsoleAssets({ maxBodyBytes: config.limits.maxBodyBytes });
  const sockets = new Set<Socket>();
  const serve = (req: IncomingMessage, res: ServerResponse) => void route(req, res);
  const early = options.listener;
  const http = early?.server ?? createHttpServer(serve);
  http.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // Without this, a keep-alive client holds stop() open until the drain limit even though its
  // last response went out long ago.
  const unanswered = new Set<ServerResponse>();
  http.on('request', (_req, res: ServerResponse) => {
    if (stopping) res.setHeader('connection', 'close');
    unanswered.add(res);
    res.on('close', () => {
      unanswered.delete(res);
      // A response that ends while stopping (an SSE stream that stop() completed) leaves
      // its keep-alive connection idle, and http.close() would wait out keepAliveTimeout.
      if (stopping) setImmediate(() => http.closeIdleConnections());
    });
  });
  const guard = browserGuard(config);
  const ws = attachGraphqlWs({
    server: http,
    yoga,
    maskError,
    logger,
    authenticate,
    viewers,
    recordAuthFailure: authFailureRecorder(logger, metrics),
    guard,
    maxPayload: config.limits.maxBodyBytes,
  });

  /** An error answered here, before yoga, as every error body is (maskedReply). */
  const refuse = (req: IncomingMessage, res: ServerResponse, error: AppError, status: number) =>
    reply(res, maskedReply(maskError, error, { status, requestId: requestIdOfMessage(req) }));

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!guard.hostAllowed(req.headers.host)) return refuse(req, res, HOST_REFUSED, 403);
    const path = (req.url ?? '/').split('?')[0];
    if ((req.method === 'GET' || req.method === 'HEAD') && path === '/') {
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': home.csp,
        'x-frame-options': 'DENY',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-cache',
      });
      return void res.end(req.method === 'HEAD' ? undefined : home.html);
    }
    if (req.method === 'GET' && path === '/health') {
      // A process whose database is gone for good cannot serve: unhealthy, unlike a database
      // that does not answer for now, which only /ready reports.
      if (lost) return send(res, 503, 'application/json', '{"status":"database lost"}');
      return send(res, 200, 'application/json', '{"status":"ok"}');
    }
    if (req.method === 'GET' && path === '/ready') {
      try {
        await driver.ping();
        return send(res, 200, 'application/json', '{"status":"ready"}');
      } catch (error) {
        logger.warn({ err: error }, 'readiness check failed');
        return send(res, 503, 'application/json', '{"status":"database unavailable"}');
      }
    }
    if (req.method === 'GET' && path === '/metrics') {
      return send(res, 200, metrics.registry.contentType, await metrics.registry.metrics());
    }
    if (consoleAssets.serve(req, res)) return;
    if (graphiql.serveAsset(req, res)) return;
    // One exact path for GraphQL: variants such as /graphql/ or //graphql are not it.
    if (path !== yoga.graphqlEndpoint) return refuse(req, res, NOT_FOUND, 404);
    return yoga(req, res);
  }

  let stopping: Promise<void> | undefined;
  return {
    config,
    metrics,
    yoga,
    database,
    repositoriesFor,
    driver,
    a2aStandin: a2a.standin,
    live,
    simulator,
    tracing,
    databaseLost,
    start: () =>
      new Promise((resolve, reject) => {
        if (early) {
          early.serve(serve);
          simulator?.start();
          return resolve(early.url);
        }
        // ws forwards the HTTP server's errors to the WebSocket server, where graphql-ws
        // prints them with a stack trace; a listen error is for this promise alone to report.
        http.removeAllListeners('error');
        http.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, config)));
        http.listen(config.port, config.host, () => {
          const { port } = http.address() as AddressInfo;
          const host = config.host.includes(':') ? `[${config.host}]` : config.host;
          simulator?.start();
          resolve(`http://${host}:${port}`);
        });
      }),
    stop(drainMs = 5_000) {
      stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => http.close(() => resolve()));
        http.closeIdleConnections();
        for (const res of unanswered) if (!res.headersSent) res.setHeader('connection', 'close');
        const timer = setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, drainMs);
        // Ending the subscriptions completes SSE responses, so their connections can close.
        await Promise.all([
          ws.close(Math.min(drainMs, 1_000)),
          production.close().then(() => live.stop()),
          simulator?.stop(),
        ]);
        await closed;
        clearTimeout(timer);
        await a2a.stop();
        await database.driver.close(Math.ceil(drainMs / 1000));
        // Yoga's plugins release what they hold in their onDispose (the tracing exporter).
        await yoga.dispose();
      })();
      return stopping;
    },
  };
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  reply(res, { status, headers: { 'content-type': contentType }, body });
}

function reply(res: ServerResponse, { status, headers, body }: HttpReply): void {
  res.writeHead(status, { ...headers, 'cache-control': 'no-store' });
  res.end(body);
}

const NOT_FOUND = notFound('Not found: GraphQL is served at /graphql');
