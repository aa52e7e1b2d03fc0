import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Repositories } from './context.js';
import { discoverCatalog, missingViews } from './db/catalog.js';
import { countStatements, type Driver } from './db/driver.js';
import { Simulator } from './db/embedded/simulator.js';
import { type OpenDatabase, openDatabase } from './db/open.js';
import { createLiveHub, type LiveHub } from './live/hub.js';
import { attachGraphqlWs } from './live/websocket.js';
import { Metrics } from './metrics.js';
import { AgentRepository } from './repositories/agents.js';
import { ExecStatRepository } from './repositories/exec-stats.js';
import { TeamHistoryRepository } from './repositories/team-history.js';
import { TeamRepository } from './repositories/teams.js';
import { schema } from './schema/index.js';
import { type AgentGraphYoga, createAgentGraphYoga, createErrorMapper } from './yoga.js';

export interface AgentGraphServer {
  readonly config: Config;
  readonly metrics: Metrics;
  readonly yoga: AgentGraphYoga;
  readonly database: OpenDatabase;
  readonly repositories: Repositories;
  /** The driver every repository uses, counted by agentgraph_db_statements_total. */
  readonly driver: Driver;
  /** Live subscriptions: the poller and the pubsub. */
  readonly live: LiveHub;
  /** Present in embedded mode with SIMULATE on. */
  readonly simulator: Simulator | undefined;
  /** Listens on config.host:config.port (0 picks a free port); resolves to the base URL. */
  start(): Promise<string>;
  /**
   * Stops accepting, closes WebSocket clients and ends subscriptions, stops the poller and
   * the simulator, lets in-flight requests finish (up to drainMs), then closes the database.
   */
  stop(drainMs?: number): Promise<void>;
}

export async function createServer(config: Config, logger: Logger): Promise<AgentGraphServer> {
  const metrics = new Metrics({ processMetrics: true });
  const database = await openDatabase(config.database);
  const driver = countStatements(database.driver, (name) =>
    metrics.dbStatements.inc({ statement: name }),
  );
  const catalog = await discoverCatalog(driver, config.database.viewScope, sessionUser(config));
  for (const view of missingViews(catalog)) {
    logger.warn(
      { view: view.name, grant: view.grant },
      `view ${view.name} is missing or not granted; fields that need it will fail`,
    );
  }
  const repositories: Repositories = {
    agents: new AgentRepository(driver, catalog),
    execStats: new ExecStatRepository(driver, catalog),
    teams: new TeamRepository(driver, catalog),
    history: new TeamHistoryRepository(driver, catalog),
  };
  const live = createLiveHub({
    config: config.live,
    source: repositories.history,
    metrics,
    logger: logger.child({ component: 'live' }),
  });
  const errors = createErrorMapper(logger, metrics);
  const yoga = createAgentGraphYoga({ schema, repositories, live, errors });
  const simulator =
    database.embedded && config.live.simulate
      ? new Simulator(database.embedded.pg, { logger: logger.child({ component: 'simulator' }) })
      : undefined;

  const sockets = new Set<Socket>();
  const http = createHttpServer((req, res) => {
    void route(req, res);
  });
  http.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const ws = attachGraphqlWs({ server: http, yoga, errors, logger });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/health') {
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
    return yoga(req, res);
  }

  let stopping: Promise<void> | undefined;
  return {
    config,
    metrics,
    yoga,
    database,
    repositories,
    driver,
    live,
    simulator,
    start: () =>
      new Promise((resolve, reject) => {
        http.once('error', reject);
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
        const timer = setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, drainMs);
        // Ending the subscriptions completes SSE responses, so their connections can close.
        await Promise.all([ws.close(Math.min(drainMs, 1_000)), live.stop(), simulator?.stop()]);
        await closed;
        clearTimeout(timer);
        await database.driver.close();
      })();
      return stopping;
    },
  };
}

function sessionUser(config: Config): string {
  return config.database.kind === 'embedded'
    ? config.database.sessionUser
    : config.database.user.toUpperCase();
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(body);
}
