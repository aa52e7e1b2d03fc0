import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Metrics } from '../metrics.js';
import type { Team, TeamTool } from '../model/team.js';
import { type A2ACards, A2AClient, type A2AClientOptions, a2aNotConfigured } from './client.js';
import { catalogTool } from './drift.js';
import { type A2ACatalog, type A2AStandin, startA2AStandin } from './standin.js';

export interface A2AService {
  readonly cards: A2ACards;
  /** The embedded stand-in, when the client talks to it. */
  readonly standin: A2AStandin | undefined;
  stop(): Promise<void>;
}

/** What the stand-in's token endpoint accepts when A2A_USERNAME/A2A_PASSWORD are unset. */
export const STANDIN_PASSWORD = 'embedded-demo';

/**
 * The A2A client the schema uses: to A2A_BASE_URL when set; in embedded mode otherwise to a
 * stand-in started here over every team of the database, with a token obtained the way
 * Oracle's is; with Oracle and no A2A_BASE_URL, A2A fields fail alone with a message saying
 * what to set.
 */
/** Every team of the database with its tools, which the stand-in publishes (server.ts passes the team repository). */
export interface TeamCatalog {
  allWithTools(): Promise<{ team: Team; tools: TeamTool[] }[]>;
}

export async function startA2A(
  config: Config,
  deps: { logger: Logger; metrics: Metrics; teams: TeamCatalog },
): Promise<A2AService> {
  const a2a = config.a2a;
  const logger = deps.logger.child({ component: 'a2a' });
  const client = (baseUrl: string, credentials: A2AClientOptions['credentials']) =>
    new A2AClient({
      baseUrl,
      token: a2a.token,
      credentials,
      timeoutMs: a2a.timeoutMs,
      cacheTtlMs: a2a.cacheTtlMs,
      retries: a2a.retries,
      maxBodyBytes: a2a.maxBodyBytes,
      onRequest: (outcome) => deps.metrics.a2aRequests.inc({ outcome }),
      onCache: (result) => deps.metrics.a2aCache.inc({ result }),
      logger,
    });

  if (a2a.baseUrl !== undefined) {
    // loadConfig has checked that a token URL exists when credentials are set.
    const { username, password, tokenUrl } = a2a;
    const cards = client(
      a2a.baseUrl,
      username !== undefined && password !== undefined && tokenUrl !== undefined
        ? { username, password, tokenUrl }
        : undefined,
    );
    return { cards, standin: undefined, stop: async () => {} };
  }
  if (config.database.kind !== 'embedded') {
    logger.warn('A2A_BASE_URL is not set: A2A fields will fail');
    return { cards: a2aNotConfigured, standin: undefined, stop: async () => {} };
  }
  const credentials = {
    username: a2a.username ?? config.database.sessionUser,
    password: a2a.password ?? STANDIN_PASSWORD,
  };
  const standin = await startA2AStandin({
    // The A2A server addresses a team by name (seed 001's card URL): of two owners' teams of
    // one name it publishes the one a name finds, the first by owner.
    loadCatalog: async (): Promise<A2ACatalog> => ({
      teams: (await deps.teams.allWithTools())
        .filter(({ team }, i, all) => all.findIndex((t) => t.team.name === team.name) === i)
        .map(({ team, tools }) => ({
          name: team.name,
          description: team.description,
          tools: tools.map(catalogTool),
        })),
    }),
    credentials,
    staticTokens: a2a.token === undefined ? [] : [a2a.token],
    port: a2a.standinPort,
    logger,
  });
  logger.info({ baseUrl: standin.baseUrl }, 'embedded A2A stand-in listening');
  return {
    cards: client(standin.baseUrl, { ...credentials, tokenUrl: standin.tokenUrl }),
    standin,
    stop: () => standin.stop(),
  };
}
