import DataLoader from 'dataloader';
import type { Agent } from './model/agent.js';
import type { ListPlan } from './model/plan.js';
import type {
  LlmPrompt,
  TaskFailure,
  TaskRun,
  Team,
  TeamRun,
  TeamRunFilter,
  TeamStats,
  TeamTool,
  ToolCall,
} from './model/team.js';
import type { Page } from './repositories/agents.js';
import type { Repositories } from './repositories/create.js';

/**
 * Per-request batching: every relation in a query costs one statement per list level,
 * whatever the page sizes. A fresh set is made for each request (and each subscription
 * event), so no row outlives the operation that read it.
 *
 * Each loader is made on first use: an operation reads through a few of them, and a
 * subscription keeps its own context (with this set) for its whole life while its events
 * run on contexts of their own (src/subscription-events.ts). Made up front, the eleven
 * loaders and their caches cost each of 5,000 idle subscribers about 6 KiB of heap.
 */
export class Loaders {
  #agentByName?: DataLoader<string, Agent | null>;
  #agentByNameWithoutDetails?: DataLoader<string, Agent | null>;
  #teamByKey?: DataLoader<string, Team | null>;
  #toolsOfTeam?: DataLoader<string, TeamTool[]>;
  #statsOfTeam?: DataLoader<string, TeamStats>;
  #runById?: DataLoader<string, TeamRun | null>;
  #tasksOfRun?: DataLoader<string, TaskRun[]>;
  #toolCallsOfRun?: DataLoader<string, ToolCall[]>;
  #toolCallById?: DataLoader<string, ToolCall | null>;
  #failuresOfRun?: DataLoader<string, TaskFailure[]>;
  #planned?: Map<string, DataLoader<string, unknown>>;
  #ofRuns?: Map<string, DataLoader<TeamRun, TeamRun, string>>;
  #promptPages?: Map<string, DataLoader<string, Page<LlmPrompt>>>;

  constructor(private readonly repositories: Repositories) {}

  get agentByName(): DataLoader<string, Agent | null> {
    this.#agentByName ??= new DataLoader((names) => this.repositories.agents.byNames(names));
    return this.#agentByName;
  }

  /** Without DESCRIBE_AGENT, for selections that ask only for the agents view's columns. */
  get agentByNameWithoutDetails(): DataLoader<string, Agent | null> {
    this.#agentByNameWithoutDetails ??= new DataLoader((names) =>
      this.repositories.agents.byNames(names, false),
    );
    return this.#agentByNameWithoutDetails;
  }

  /**
   * Teams by key: teamKey(owner, name) or a bare name (the first of that name by owner), see
   * src/model/team.ts. Every loader of a team's rows below takes team keys: in DBA_ views two
   * owners may each have a team of one name, and each has its own tools, runs and stats.
   */
  get teamByKey(): DataLoader<string, Team | null> {
    this.#teamByKey ??= new DataLoader((keys) => this.repositories.teams.byKeys(keys));
    return this.#teamByKey;
  }

  get toolsOfTeam(): DataLoader<string, TeamTool[]> {
    this.#toolsOfTeam ??= new DataLoader((names) => this.repositories.teams.toolsOf(names));
    return this.#toolsOfTeam;
  }

  get statsOfTeam(): DataLoader<string, TeamStats> {
    this.#statsOfTeam ??= new DataLoader((names) => this.repositories.teams.statsOf(names));
    return this.#statsOfTeam;
  }

  get runById(): DataLoader<string, TeamRun | null> {
    this.#runById ??= new DataLoader((ids) => this.repositories.history.runsByIds(ids));
    return this.#runById;
  }

  get tasksOfRun(): DataLoader<string, TaskRun[]> {
    this.#tasksOfRun ??= new DataLoader((ids) => this.repositories.history.tasksOf(ids));
    return this.#tasksOfRun;
  }

  get toolCallsOfRun(): DataLoader<string, ToolCall[]> {
    this.#toolCallsOfRun ??= new DataLoader((ids) => this.repositories.history.toolCallsOf(ids));
    return this.#toolCallsOfRun;
  }

  get toolCallById(): DataLoader<string, ToolCall | null> {
    this.#toolCallById ??= new DataLoader((ids) => this.repositories.history.toolCallsByIds(ids));
    return this.#toolCallById;
  }

  get failuresOfRun(): DataLoader<string, TaskFailure[]> {
    this.#failuresOfRun ??= new DataLoader((ids) => this.repositories.history.failuresOf(ids));
    return this.#failuresOfRun;
  }

  /** One loader per window: every task asking for the same page batches together. */
  promptsOfConversation(offset: number, limit: number): DataLoader<string, Page<LlmPrompt>> {
    this.#promptPages ??= new Map();
    return loaderFor(this.#promptPages, `${offset}:${limit}`, (ids) =>
      this.repositories.history.promptPagesOf(ids, offset, limit),
    );
  }

  /**
   * The roots of a plan (src/schema/plan.ts) batched per plan: every key asking the same root
   * with the same plan (each team of a page, each id of `nodes`) is one statement, which reads
   * the plan's lists with the rows (src/db/sql/history-plan.ts).
   */
  private planned<V>(
    key: string,
    load: (keys: readonly string[]) => Promise<V[]>,
  ): DataLoader<string, V> {
    this.#planned ??= new Map();
    return loaderFor(this.#planned as Map<string, DataLoader<string, V>>, key, load);
  }

  /**
   * Team.runs by team key: one loader per (filter, window, plan); all teams asking it batch
   * together.
   */
  runsOfTeam(
    filter: TeamRunFilter,
    offset: number,
    limit: number,
    plan: ListPlan,
  ): DataLoader<string, Page<TeamRun>> {
    return this.planned(JSON.stringify(['runsOfTeam', filter, offset, limit, plan.key]), (keys) =>
      this.repositories.history.plannedRunPages(keys, filter, offset, limit, plan),
    );
  }

  /** A run by TEAM_EXEC_ID with its plan (teamRun, node, nodes). */
  plannedRunById(plan: ListPlan): DataLoader<string, TeamRun | null> {
    return this.planned(`runById|${plan.key}`, (ids) =>
      this.repositories.history.plannedRunsByIds(ids, plan),
    );
  }

  /** The tasks of a run with their plan (TaskRun nodes). */
  plannedTasksOfRun(plan: ListPlan): DataLoader<string, TaskRun[]> {
    return this.planned(`tasksOfRun|${plan.key}`, (ids) =>
      this.repositories.history.plannedTasksOfRuns(ids, plan),
    );
  }

  /** A tool call by INVOCATION_ID with its plan (ToolCall nodes). */
  plannedToolCallById(plan: ListPlan): DataLoader<string, ToolCall | null> {
    return this.planned(`toolCallById|${plan.key}`, (ids) =>
      this.repositories.history.plannedCallsByIds(ids, plan),
    );
  }

  /**
   * Runs a subscription event holds, with what their plan reads below them. An event's
   * context is shared by every subscription of one viewer scope (src/subscription-events.ts)
   * and plans are canonical, so every form of the event needing the same rows (whatever its
   * aliases, field order or fragments) gets them from one statement, even when its execution
   * starts after the first form's statement was sent.
   */
  plannedOfRuns(plan: ListPlan): DataLoader<TeamRun, TeamRun, string> {
    this.#ofRuns ??= new Map();
    let loader = this.#ofRuns.get(plan.key);
    if (!loader) {
      loader = new DataLoader((runs) => this.repositories.history.plannedOfRuns(runs, plan), {
        cacheKeyFn: (run) => run.execId,
      });
      this.#ofRuns.set(plan.key, loader);
    }
    return loader;
  }

  /** Team.waitingForHuman with its plan, by team key. */
  plannedWaitingOfTeam(plan: ListPlan): DataLoader<string, TeamRun[]> {
    return this.planned(`waitingOfTeam|${plan.key}`, (keys) =>
      this.repositories.history.plannedWaiting(keys, plan),
    );
  }
}

/** The loader of `loaders` for `key`, made on first use. */
function loaderFor<V>(
  loaders: Map<string, DataLoader<string, V>>,
  key: string,
  load: (keys: readonly string[]) => Promise<V[]>,
): DataLoader<string, V> {
  let loader = loaders.get(key);
  if (!loader) {
    loader = new DataLoader(load);
    loaders.set(key, loader);
  }
  return loader;
}
