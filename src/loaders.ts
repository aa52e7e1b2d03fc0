import DataLoader from 'dataloader';
import type { Agent } from './model/agent.js';
import type { Reading, RunsOfTeamReading } from './model/reading.js';
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
  #teamByName?: DataLoader<string, Team | null>;
  #toolsOfTeam?: DataLoader<string, TeamTool[]>;
  #statsOfTeam?: DataLoader<string, TeamStats>;
  #runById?: DataLoader<string, TeamRun | null>;
  #waitingOfTeam?: DataLoader<string, TeamRun[]>;
  #tasksOfRun?: DataLoader<string, TaskRun[]>;
  #toolCallsOfRun?: DataLoader<string, ToolCall[]>;
  #toolCallById?: DataLoader<string, ToolCall | null>;
  #failuresOfRun?: DataLoader<string, TaskFailure[]>;
  #runPages?: Map<string, DataLoader<string, Page<TeamRun>>>;
  #promptPages?: Map<string, DataLoader<string, Page<LlmPrompt>>>;
  #tasksReading?: Map<string, DataLoader<string, TaskRun[]>>;
  #callsReading?: Map<string, DataLoader<string, ToolCall[]>>;

  constructor(private readonly repositories: Repositories) {}

  get agentByName(): DataLoader<string, Agent | null> {
    this.#agentByName ??= new DataLoader((names) => this.repositories.agents.byNames(names));
    return this.#agentByName;
  }

  /** Without DESCRIBE_AGENT, for selections that ask only for the agents view's columns. */
  get agentByNameWithoutDetails(): DataLoader<string, Agent | null> {
    this.#agentByNameWithoutDetails ??= primable((names) =>
      this.repositories.agents.byNames(names, false),
    );
    return this.#agentByNameWithoutDetails;
  }

  get teamByName(): DataLoader<string, Team | null> {
    this.#teamByName ??= new DataLoader((names) => this.repositories.teams.byNames(names));
    return this.#teamByName;
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

  get waitingOfTeam(): DataLoader<string, TeamRun[]> {
    this.#waitingOfTeam ??= new DataLoader((names) =>
      this.repositories.history.waitingForHuman(names),
    );
    return this.#waitingOfTeam;
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

  /**
   * The same lists reading only what an operation's selection reads (see readingOf): one
   * loader per set of properties, and every level of an operation asks for the same set, so
   * a level stays one statement.
   */
  tasksOfRunReading({ wanted, key }: Reading<TaskRun>): DataLoader<string, TaskRun[]> {
    this.#tasksReading ??= new Map();
    return loaderFor(this.#tasksReading, key, (ids) =>
      this.repositories.history.tasksOf(ids, wanted),
    );
  }

  toolCallsOfRunReading({ wanted, key }: Reading<ToolCall>): DataLoader<string, ToolCall[]> {
    this.#callsReading ??= new Map();
    return loaderFor(this.#callsReading, key, (ids) =>
      this.repositories.history.toolCallsOf(ids, wanted),
    );
  }

  /** One loader per window: every task asking for the same page batches together. */
  promptsOfConversation(offset: number, limit: number): DataLoader<string, Page<LlmPrompt>> {
    this.#promptPages ??= new Map();
    return loaderFor(this.#promptPages, `${offset}:${limit}`, (ids) =>
      this.repositories.history.promptPagesOf(ids, offset, limit),
    );
  }

  /**
   * One loader per distinct (filter, window, what is read): all teams asking for the same
   * page batch together. When the reading nests the runs' tasks or tool calls, the one
   * statement returns them too, and each run's list primes the loader its field asks
   * (tasksOfRunReading / toolCallsOfRunReading with the same reading, and the tasks' agents
   * agentByNameWithoutDetails), so those fields resolve without a statement of their own.
   */
  runsOfTeam(
    filter: TeamRunFilter,
    offset: number,
    limit: number,
    { runs, tasks, toolCalls, agents }: RunsOfTeamReading,
  ): DataLoader<string, Page<TeamRun>> {
    this.#runPages ??= new Map();
    const key = JSON.stringify([
      filter,
      offset,
      limit,
      runs.key,
      tasks?.key,
      toolCalls?.key,
      agents,
    ]);
    return loaderFor(this.#runPages, key, async (names) => {
      const read = await this.repositories.history.pagesByTeams(
        names,
        filter,
        offset,
        limit,
        runs.wanted,
        {
          ...(tasks ? { tasks } : {}),
          ...(toolCalls ? { toolCalls } : {}),
          ...(agents ? { agents } : {}),
        },
      );
      if (tasks) prime(this.tasksOfRunReading(tasks), read.tasksOfRun);
      if (toolCalls) prime(this.toolCallsOfRunReading(toolCalls), read.toolCallsOfRun);
      if (agents) prime(this.agentByNameWithoutDetails, read.agentsByName);
      return read.pages;
    });
  }
}

/**
 * What a primable loader holds (its DataLoader cache) and was primed with, by key, readable
 * at once: a field whose list came in its parent's statement (runsOfTeam) resolves
 * synchronously through loadNow, and graphql-jit (src/compiled-queries.ts) then spends no
 * promise on it. A dashboard's tasks, tool calls and agents are 1,300 such fields: about 1 of
 * its 15 ms of CPU (the serving thread's and V8's garbage-collection threads').
 */
const primedValues = new WeakMap<
  DataLoader<string, unknown>,
  { readonly cache: Map<string, unknown>; readonly values: Map<string, unknown> }
>();

/** A DataLoader whose primed values loadNow reads. */
function primable<V>(load: DataLoader.BatchLoadFn<string, V>): DataLoader<string, V> {
  const cache = new Map<string, Promise<V>>();
  const loader = new DataLoader(load, { cacheMap: cache });
  primedValues.set(loader as DataLoader<string, unknown>, { cache, values: new Map() });
  return loader;
}

/**
 * The value `loader` was primed with for `key` as it is, else the loader's promise. A key the
 * loader already held keeps that value (as DataLoader's own prime does), so load and loadNow
 * read the same.
 */
export function loadNow<V>(loader: DataLoader<string, V>, key: string): V | Promise<V> {
  const values = primedValues.get(loader as DataLoader<string, unknown>)?.values;
  return values?.has(key) ? (values.get(key) as V) : loader.load(key);
}

/** Each run's list, read along with the runs, into the loader its field asks. */
function prime<V>(loader: DataLoader<string, V>, byKey: ReadonlyMap<string, V> | null): void {
  const state = primedValues.get(loader as DataLoader<string, unknown>);
  for (const [key, value] of byKey ?? []) {
    if (state?.cache.has(key)) continue;
    loader.prime(key, value);
    state?.values.set(key, value);
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
    loader = primable(load);
    loaders.set(key, loader);
  }
  return loader;
}
