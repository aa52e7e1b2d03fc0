import type { Catalog } from '../db/catalog.js';
import type { Driver } from '../db/driver.js';
import type { Viewer } from '../model/viewer.js';
import { type ActionOptions, TeamActions } from './actions.js';
import { AgentExecutions } from './agent-executions.js';
import { AgentRepository } from './agents.js';
import type { CatalogCache } from './catalog-cache.js';
import { ExecStatRepository } from './exec-stats.js';
import { TeamActivityRepository } from './team-activity.js';
import { TeamHistoryRepository } from './team-history.js';
import { TeamRepository } from './teams.js';

export interface Repositories {
  readonly agents: AgentRepository;
  readonly execStats: ExecStatRepository;
  readonly teams: TeamRepository;
  readonly history: TeamHistoryRepository;
  readonly activity: TeamActivityRepository;
  /** respondToHuman and runTeam. */
  readonly actions: TeamActions;
  /** executeAgent. */
  readonly executions: AgentExecutions;
}

/** Repositories bound to one viewer: every statement they issue is limited to what it may see. */
export function createRepositories(
  driver: Driver,
  catalog: Catalog,
  viewer: Viewer,
  actions: ActionOptions,
  catalogCache?: CatalogCache,
): Repositories {
  const teams = new TeamRepository(driver, catalog, viewer, catalogCache);
  const agents = new AgentRepository(driver, catalog, viewer, catalogCache);
  // A plan's catalog back-edges come from the cache when it keeps them, else from the plan's
  // own statement (src/db/sql/history-plan.ts).
  const history = new TeamHistoryRepository(
    driver,
    catalog,
    viewer,
    catalogCache?.keeps ? { teams, agents } : undefined,
  );
  return {
    agents,
    execStats: new ExecStatRepository(driver, catalog),
    teams,
    history,
    activity: new TeamActivityRepository(driver, catalog, viewer),
    actions: new TeamActions(driver, catalog, viewer, history, teams, actions),
    executions: new AgentExecutions(driver, catalog, viewer, agents, actions),
  };
}
