import type { ViewScope } from '../config.js';
import { AppError, StartupError } from '../errors.js';
import { type Catalog, discoverCatalog } from './catalog.js';
import type { AgentDetailsProbe, Driver } from './driver.js';
import {
  type ExecuteAgentProcedure,
  executeAgentArguments,
  resolveExecuteAgent,
} from './sql/execute-agent.js';
import { fetchRows } from './sql/query.js';
import { type SessionInfo, sessionQuery } from './sql/session.js';

/** What start-up learns about the database, once, before serving. */
export interface Discovery {
  readonly session: SessionInfo;
  readonly catalog: Catalog;
  readonly agentDetails: AgentDetailsProbe;
  /** DBMS_AI_AGENT.EXECUTE_AGENT's overloads (ALL_ARGUMENTS), and the calls built from them. */
  readonly executeAgent: ExecuteAgentProcedure;
  /** How long the steps took together (the dictionary views can be slow). */
  readonly durationMs: number;
}

/**
 * The session (SESSION_USER owns the USER_ views' rows), the views and their column variants,
 * whether DESCRIBE_AGENT can be called, and how EXECUTE_AGENT is called: the server and `npm run oracle:check` run the
 * same steps, so the check shows what the server will decide.
 */
export async function discoverDatabase(driver: Driver, scope: ViewScope): Promise<Discovery> {
  const started = performance.now();
  // The four statements do not depend on one another's answers, so they go out at once: a
  // remote database answers them in about one round trip instead of four, and on Oracle the
  // short ones run beside the dictionary's (each on a connection of the pool, DB_POOL_MAX).
  const sessionRead = fetchRows(driver, sessionQuery).then(([session]) => {
    if (!session) throw new Error('the session statement returned no row');
    return session;
  });
  const catalogRead = discoverCatalog(
    driver,
    scope,
    sessionRead.then((session) => session.sessionUser),
  ).catch((error: unknown) => {
    // A slow dictionary is an operator's setting to raise, not an internal failure.
    if (error instanceof AppError && error.code === 'TIMEOUT') {
      throw new StartupError(
        'the data dictionary (ALL_SYNONYMS, ALL_TAB_COLUMNS) did not answer within DB_DISCOVERY_TIMEOUT_MS; raise it',
        { cause: error },
      );
    }
    throw error;
  });
  const [session, catalog, agentDetails, executeAgentRows] = await Promise.all([
    sessionRead,
    catalogRead,
    driver.probeAgentDetails(),
    fetchRows(driver, executeAgentArguments),
  ]);
  const executeAgent = resolveExecuteAgent(executeAgentRows);
  return {
    session,
    catalog,
    agentDetails,
    executeAgent,
    durationMs: Math.round(performance.now() - started),
  };
}
