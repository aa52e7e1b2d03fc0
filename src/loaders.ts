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
 */
export function createLoaders(repositories: Repositories) {
  const { agents, teams, history } = repositories;
  const runPages = new Map<string, DataLoader<string, Page<TeamRun>>>();
  const promptPages = new Map<string, DataLoader<string, Page<LlmPrompt>>>();
  const tasksReading = new Map<string, DataLoader<string, TaskRun[]>>();
  const callsReading = new Map<string, DataLoader<string, ToolCall[]>>();
  /** The loader of `loaders` for `key`, made on first use. */
  const loaderFor = <V>(
    loaders: Map<string, DataLoader<string, V>>,
    key: string,
    load: (keys: readonly string[]) => Promise<V[]>,
  ) => {
    let loader = loaders.get(key);
    if (!loader) {
      loader = new DataLoader(load);
      loaders.set(key, loader);
    }
    return loader;
  };
  const tasksOfRunReading = ({ wanted, key }: Reading<TaskRun>) =>
    loaderFor(tasksReading, key, (ids) => history.tasksOf(ids, wanted));
  const toolCallsOfRunReading = ({ wanted, key }: Reading<ToolCall>) =>
    loaderFor(callsReading, key, (ids) => history.toolCallsOf(ids, wanted));
  /** Each run's list, read along with the runs, into the loader its field asks. */
  const prime = <V>(
    loader: DataLoader<string, V[]> | undefined,
    ofRun: ReadonlyMap<string, V[]> | null,
  ) => {
    if (!loader || !ofRun) return;
    for (const [execId, list] of ofRun) loader.prime(execId, list);
  };
  return {
    agentByName: new DataLoader<string, Agent | null>((names) => agents.byNames(names)),
    /** Without DESCRIBE_AGENT, for selections that ask only for the agents view's columns. */
    agentByNameWithoutDetails: new DataLoader<string, Agent | null>((names) =>
      agents.byNames(names, false),
    ),
    teamByName: new DataLoader<string, Team | null>((names) => teams.byNames(names)),
    toolsOfTeam: new DataLoader<string, TeamTool[]>((names) => teams.toolsOf(names)),
    statsOfTeam: new DataLoader<string, TeamStats>((names) => teams.statsOf(names)),
    runById: new DataLoader<string, TeamRun | null>((ids) => history.runsByIds(ids)),
    waitingOfTeam: new DataLoader<string, TeamRun[]>((names) => history.waitingForHuman(names)),
    tasksOfRun: new DataLoader<string, TaskRun[]>((ids) => history.tasksOf(ids)),
    toolCallsOfRun: new DataLoader<string, ToolCall[]>((ids) => history.toolCallsOf(ids)),
    /**
     * The same lists reading only what an operation's selection reads (see readingOf): one
     * loader per set of properties, and every level of an operation asks for the same set, so
     * a level stays one statement.
     */
    tasksOfRunReading,
    toolCallsOfRunReading,
    toolCallById: new DataLoader<string, ToolCall | null>((ids) => history.toolCallsByIds(ids)),
    failuresOfRun: new DataLoader<string, TaskFailure[]>((ids) => history.failuresOf(ids)),
    /** One loader per window: every task asking for the same page batches together. */
    promptsOfConversation: (offset: number, limit: number): DataLoader<string, Page<LlmPrompt>> =>
      loaderFor(promptPages, `${offset}:${limit}`, (ids) =>
        history.promptPagesOf(ids, offset, limit),
      ),
    /**
     * One loader per distinct (filter, window, what is read): all teams asking for the same
     * page batch together. When the reading nests the runs' tasks or tool calls, the one
     * statement returns them too, and each run's list primes the loader its field asks
     * (tasksOfRunReading / toolCallsOfRunReading with the same reading), so those fields
     * resolve without a statement of their own.
     */
    runsOfTeam(
      filter: TeamRunFilter,
      offset: number,
      limit: number,
      reading: RunsOfTeamReading,
    ): DataLoader<string, Page<TeamRun>> {
      const { runs, tasks, toolCalls } = reading;
      const key = JSON.stringify([filter, offset, limit, runs.key, tasks?.key, toolCalls?.key]);
      return loaderFor(runPages, key, async (names) => {
        const read = await history.pagesByTeams(names, filter, offset, limit, runs.wanted, {
          ...(tasks ? { tasks } : {}),
          ...(toolCalls ? { toolCalls } : {}),
        });
        prime(tasks && tasksOfRunReading(tasks), read.tasksOfRun);
        prime(toolCalls && toolCallsOfRunReading(toolCalls), read.toolCallsOfRun);
        return read.pages;
      });
    },
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
