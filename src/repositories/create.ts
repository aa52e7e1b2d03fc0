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

/**
 * Repositories bound to one viewer: every statement they issue is limited to what it may see.
 * One set is made per operation (src/context.ts), which reads through one or two of them: each
 * is made on first use, as the loaders are (src/loaders.ts).
 */
export function createRepositories(
  driver: Driver,
  catalog: Catalog,
  viewer: Viewer,
  actions: ActionOptions,
  catalogCache?: CatalogCache,
): Repositories {
  return new ViewerRepositories(driver, catalog, viewer, actions, catalogCache);
}

/** A class with getters on its prototype: an operation's set costs one object until used. */
class ViewerRepositories implements Repositories {
  #agents?: AgentRepository;
  #execStats?: ExecStatRepository;
  #teams?: TeamRepository;
  #history?: TeamHistoryRepository;
  #activity?: TeamActivityRepository;
  #actions?: TeamActions;
  #executions?: AgentExecutions;

  constructor(
    private readonly driver: Driver,
    private readonly catalog: Catalog,
    private readonly viewer: Viewer,
    private readonly options: ActionOptions,
    private readonly catalogCache: CatalogCache | undefined,
  ) {}

  get agents(): AgentRepository {
    this.#agents ??= new AgentRepository(this.driver, this.catalog, this.viewer, this.catalogCache);
    return this.#agents;
  }

  get execStats(): ExecStatRepository {
    this.#execStats ??= new ExecStatRepository(this.driver, this.catalog);
    return this.#execStats;
  }

  get teams(): TeamRepository {
    this.#teams ??= new TeamRepository(this.driver, this.catalog, this.viewer, this.catalogCache);
    return this.#teams;
  }

  get history(): TeamHistoryRepository {
    // A plan's catalog back-edges come from the cache when it keeps them, else from the plan's
    // own statement (src/db/sql/history-plan.ts).
    this.#history ??= new TeamHistoryRepository(
      this.driver,
      this.catalog,
      this.viewer,
      this.catalogCache?.keeps ? this : undefined,
    );
    return this.#history;
  }

  get activity(): TeamActivityRepository {
    this.#activity ??= new TeamActivityRepository(this.driver, this.catalog, this.viewer);
    return this.#activity;
  }

  get actions(): TeamActions {
    this.#actions ??= new TeamActions(
      this.driver,
      this.catalog,
      this.viewer,
      this.history,
      this.teams,
      this.options,
    );
    return this.#actions;
  }

  get executions(): AgentExecutions {
    this.#executions ??= new AgentExecutions(
      this.driver,
      this.catalog,
      this.viewer,
      this.agents,
      this.options,
    );
    return this.#executions;
  }
}
