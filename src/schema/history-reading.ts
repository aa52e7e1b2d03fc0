import type { GraphQLResolveInfo } from 'graphql';
import type { RunsOfTeamReading } from '../model/reading.js';
import type { TaskRun, TeamRun, ToolCall } from '../model/team.js';
import { readingOf, selectedOn } from './selection.js';

/**
 * The properties each field of the history types reads (see readingOf): a list level selects
 * those columns only, with its keys. One module for the three types, since a team's page of
 * runs decides what it reads of all three (runsOfTeamReading).
 */
export const TEAM_RUN_NEEDS: Readonly<Record<string, readonly (keyof TeamRun)[]>> = {
  id: ['execId'],
  execId: ['execId'],
  teamName: ['teamName'],
  team: ['teamName'],
  owner: ['owner'],
  state: ['state'],
  startDate: ['startDate'],
  endDate: ['endDate'],
  durationMs: ['startDate', 'endDate'],
  instanceId: ['instanceId'],
  tasks: ['execId'],
  toolCalls: ['execId'],
};

export const TASK_RUN_NEEDS: Readonly<Record<string, readonly (keyof TaskRun)[]>> = {
  id: ['teamExecId', 'taskOrder'],
  teamExecId: ['teamExecId'],
  teamRun: ['teamExecId'],
  taskOrder: ['taskOrder'],
  taskName: ['taskName'],
  agentName: ['agentName'],
  agent: ['agentName'],
  state: ['state'],
  input: ['input'],
  result: ['result'],
  conversationParams: ['conversationParams'],
  conversationId: ['conversationId'],
  startDate: ['startDate'],
  endDate: ['endDate'],
  durationMs: ['startDate', 'endDate'],
  failure: ['state', 'teamExecId', 'taskOrder'],
  prompts: ['conversationId'],
  toolCalls: ['teamExecId', 'taskOrder'],
};

export const TOOL_CALL_NEEDS: Readonly<Record<string, readonly (keyof ToolCall)[]>> = {
  id: ['invocationId'],
  invocationId: ['invocationId'],
  teamExecId: ['teamExecId'],
  taskOrder: ['taskOrder'],
  taskRun: ['teamExecId', 'taskOrder'],
  toolOwner: ['toolOwner'],
  toolName: ['toolName'],
  agentName: ['agentName'],
  taskName: ['taskName'],
  startDate: ['startDate'],
  endDate: ['endDate'],
  durationMs: ['startDate', 'endDate'],
  input: ['input'],
  output: ['output'],
  toolOutput: ['toolOutput'],
};

/** The Agent fields read from DESCRIBE_AGENT's JSON rather than the agents view. */
export const AGENT_DETAIL_FIELDS: ReadonlySet<string> = new Set([
  'description',
  'inputs',
  'outputs',
  'callContract',
]);

export const taskRunReading = (info: GraphQLResolveInfo) =>
  readingOf(info, 'TaskRun', TASK_RUN_NEEDS);

export const toolCallReading = (info: GraphQLResolveInfo) =>
  readingOf(info, 'ToolCall', TOOL_CALL_NEEDS);

/**
 * Decided per operation, like readingOf: when the operation selects a run's tasks or tool
 * calls anywhere, the runs of teams' pages come with them, read in the same statement with the
 * very properties (and loader key) those lists' own fields read, so the loaders primed with
 * them (src/loaders.ts) are the ones the fields ask. An operation that also selects the same
 * lists elsewhere (under teamRun(execId), say) reads the union there, by the general loaders.
 * The tasks' agents come along when no Agent field of the operation needs DESCRIBE_AGENT, the
 * case where every TaskRun.agent asks agentByNameWithoutDetails.
 */
export function runsOfTeamReading(info: GraphQLResolveInfo): RunsOfTeamReading {
  const tasks = selectedOn(info, 'TeamRun', 'tasks');
  const toolCalls =
    selectedOn(info, 'TeamRun', 'toolCalls') || (tasks && selectedOn(info, 'TaskRun', 'toolCalls'));
  const agents =
    tasks &&
    selectedOn(info, 'TaskRun', 'agent') &&
    ![...AGENT_DETAIL_FIELDS].some((field) => selectedOn(info, 'Agent', field));
  return {
    runs: readingOf(info, 'TeamRun', TEAM_RUN_NEEDS),
    ...(tasks ? { tasks: taskRunReading(info) } : {}),
    ...(toolCalls ? { toolCalls: toolCallReading(info) } : {}),
    ...(agents ? { agents } : {}),
  };
}
