import DataLoader from 'dataloader';
import type { Agent } from './model/agent.js';
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
     * The same lists without their large text columns, for list levels whose selection asks
     * for none of them (see selectsAny): the dashboard's. A level picks one of the two, so it
     * stays one statement.
     */
    tasksOfRunWithoutTexts: new DataLoader<string, TaskRun[]>((ids) => history.tasksOf(ids, false)),
    toolCallsOfRunWithoutTexts: new DataLoader<string, ToolCall[]>((ids) =>
      history.toolCallsOf(ids, false),
    ),
    toolCallById: new DataLoader<string, ToolCall | null>((ids) => history.toolCallsByIds(ids)),
    failuresOfRun: new DataLoader<string, TaskFailure[]>((ids) => history.failuresOf(ids)),
    /** One loader per window: every task asking for the same page batches together. */
    promptsOfConversation(offset: number, limit: number): DataLoader<string, Page<LlmPrompt>> {
      const key = `${offset}:${limit}`;
      let loader = promptPages.get(key);
      if (!loader) {
        loader = new DataLoader((ids) => history.promptPagesOf(ids, offset, limit));
        promptPages.set(key, loader);
      }
      return loader;
    },
    /** One loader per distinct (filter, window): all teams asking for the same page batch together. */
    runsOfTeam(
      filter: TeamRunFilter,
      offset: number,
      limit: number,
    ): DataLoader<string, Page<TeamRun>> {
      const key = JSON.stringify([filter, offset, limit]);
      let loader = runPages.get(key);
      if (!loader) {
        loader = new DataLoader((names) => history.pagesByTeams(names, filter, offset, limit));
        runPages.set(key, loader);
      }
      return loader;
    },
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
