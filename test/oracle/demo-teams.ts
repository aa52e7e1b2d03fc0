/**
 * The demo teams, tools and history as the repositories should return them, computed in
 * JavaScript straight from demoData() (never through SQL): the expected values of
 * contract-teams.test.ts. Orders follow the repositories' documented ORDER BYs, with text
 * compared as Oracle's BINARY sort (and PGlite's C collation) compares it.
 */
import { demoData } from '../../src/db/embedded/demo-data.js';
import {
  type TaskRun,
  TEAM_RUN_STATES,
  type Team,
  type TeamRun,
  type TeamRunFilter,
  type TeamRunOrder,
  type TeamStats,
  type TeamTool,
  type ToolCall,
  type ToolCallFilter,
  teamKey,
} from '../../src/model/team.js';
import { percentileCont, rounded } from './contract-support.js';

interface Attribute {
  readonly owner: string;
  readonly agent_team_name?: string;
  readonly task_name?: string;
  readonly tool_name?: string;
  readonly attribute_name: string;
  readonly attribute_value: string;
}

const data = demoData() as unknown as Record<string, Record<string, never>[]>;
const table = <T>(name: string) => (data[name] ?? []) as unknown as T[];
const date = (iso: string | null) => (iso === null ? null : new Date(iso));

export const TEAMS: readonly Team[] = table<{
  owner: string;
  agent_team_name: string;
  description: string | null;
  status: string | null;
}>('dba_ai_agent_teams').map((r) => ({
  id: teamKey(r.owner, r.agent_team_name),
  name: r.agent_team_name,
  owner: r.owner,
  description: r.description,
  status: r.status,
}));

export const RUNS: readonly TeamRun[] = table<{
  team_exec_id: string;
  team_name: string;
  team_owner: string;
  start_date: string | null;
  end_date: string | null;
  state: TeamRun['state'];
  team_instance_id: number | null;
}>('dba_ai_agent_team_history').map((r) => ({
  execId: r.team_exec_id,
  teamName: r.team_name,
  owner: r.team_owner,
  state: r.state,
  startDate: date(r.start_date),
  endDate: date(r.end_date),
  instanceId: r.team_instance_id,
}));

export const TASKS: readonly TaskRun[] = table<{
  team_exec_id: string;
  team_name: string;
  task_owner: string;
  agent_name: string;
  task_name: string | null;
  task_order: number;
  coversation_param: string | null;
  input: string | null;
  result: string | null;
  state: TaskRun['state'];
  start_date: string | null;
  end_date: string | null;
}>('dba_ai_agent_task_history').map((r) => {
  const params = r.coversation_param === null ? null : JSON.parse(r.coversation_param);
  return {
    teamExecId: r.team_exec_id,
    teamName: r.team_name,
    owner: r.task_owner,
    agentName: r.agent_name,
    taskName: r.task_name,
    taskOrder: r.task_order,
    conversationParams: params,
    conversationId: params?.conversation_id ?? null,
    input: r.input,
    result: r.result,
    state: r.state,
    startDate: date(r.start_date),
    endDate: date(r.end_date),
  };
});

export const CALLS: readonly ToolCall[] = table<{
  invocation_id: string;
  team_exec_id: string;
  task_order: number | null;
  tool_owner: string;
  tool_name: string | null;
  agent_name: string | null;
  task_name: string | null;
  start_date: string | null;
  end_date: string | null;
  input: string | null;
  output: string | null;
  tool_output: string | null;
}>('dba_ai_agent_tool_history').map((r) => ({
  invocationId: r.invocation_id,
  teamExecId: r.team_exec_id,
  taskOrder: r.task_order,
  toolOwner: r.tool_owner,
  toolName: r.tool_name,
  agentName: r.agent_name,
  taskName: r.task_name,
  startDate: date(r.start_date),
  endDate: date(r.end_date),
  input: r.input,
  output: r.output,
  toolOutput: r.tool_output,
}));

const teamAttributes = table<Attribute>('dba_ai_agent_team_attributes');
const taskAttributes = table<Attribute>('dba_ai_agent_task_attributes');
const toolAttributes = table<Attribute>('dba_ai_agent_tool_attributes');
const tools = table<{ owner: string; tool_id: number; tool_name: string }>('dba_ai_agent_tools');

const teamAttribute = (owner: string, team: string, name: string) =>
  teamAttributes.find(
    (a) => a.owner === owner && a.agent_team_name === team && a.attribute_name === name,
  )?.attribute_value ?? null;
const taskAttribute = (owner: string, task: string, name: string) =>
  taskAttributes.find((a) => a.owner === owner && a.task_name === task && a.attribute_name === name)
    ?.attribute_value ?? null;
export const toolAttribute = (owner: string, tool: string, name: string) =>
  toolAttributes.find((a) => a.owner === owner && a.tool_name === tool && a.attribute_name === name)
    ?.attribute_value ?? null;

/** Text order of Oracle's BINARY sort (and PostgreSQL's C collation). */
export function binary(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

/** Teams in the repository's order: by name, then owner. */
export function sortTeams(teams: readonly Team[]): Team[] {
  return [...teams].sort((a, b) => binary(a.name, b.name) || binary(a.owner, b.owner));
}

/**
 * A team's tools: team attribute `agents` → each member's task → the task's `tools`
 * attribute → the tool (id) and its `instruction` and `tool_type` attributes, all of the
 * team's owner. In the order the team lists its members and each task its tools; a tool
 * reached twice is listed once.
 */
export function teamTools(team: Team): TeamTool[] {
  const members = JSON.parse(teamAttribute(team.owner, team.name, 'agents') ?? '[]') as {
    name: string;
    task: string;
  }[];
  const found: TeamTool[] = [];
  for (const member of members) {
    const names = JSON.parse(taskAttribute(team.owner, member.task, 'tools') ?? '[]') as string[];
    for (const name of names) {
      const tool = tools.find((t) => t.owner === team.owner && t.tool_name === name);
      if (!tool) continue;
      found.push({
        teamName: team.name,
        teamOwner: team.owner,
        toolId: String(tool.tool_id),
        name,
        owner: team.owner,
        instruction: toolAttribute(team.owner, name, 'instruction'),
        toolType: toolAttribute(team.owner, name, 'tool_type'),
        agentName: member.name,
        taskName: member.task,
      });
    }
  }
  return found.filter((tool, i) => found.findIndex((t) => t.name === tool.name) === i);
}

const durationMs = (item: { startDate: Date | null; endDate: Date | null }) =>
  item.startDate && item.endDate ? item.endDate.getTime() - item.startDate.getTime() : null;

/**
 * A team's statistics over the runs and calls a viewer sees: runs by state, succeeded over
 * finished runs, duration percentiles of the ended runs, and the ended calls of HUMAN tools
 * (the waits for a person) in those runs.
 */
export function teamStats(
  teamOwner: string,
  teamName: string,
  runs: readonly TeamRun[],
  calls: readonly ToolCall[],
): TeamStats {
  const own = runs.filter((r) => r.owner === teamOwner && r.teamName === teamName);
  const count = (state: string) => own.filter((r) => r.state === state).length;
  const durations = own.map(durationMs).filter((d): d is number => d !== null);
  const ids = new Set(own.map((r) => r.execId));
  const waits = calls
    .filter(
      (c) =>
        ids.has(c.teamExecId) &&
        c.endDate !== null &&
        toolAttribute(c.toolOwner ?? '', c.toolName ?? '', 'tool_type') === 'HUMAN',
    )
    .map((c) => durationMs(c) as number);
  const waited = waits.reduce((sum, ms) => sum + ms, 0);
  const finished = count('SUCCEEDED') + count('FAILED');
  return {
    teamName,
    teamOwner,
    runCount: own.length,
    runsByState: Object.fromEntries(
      TEAM_RUN_STATES.map((s) => [s, count(s)]),
    ) as TeamStats['runsByState'],
    successRate: finished === 0 ? null : rounded(count('SUCCEEDED') / finished, 3),
    durationP50Ms: durations.length === 0 ? null : rounded(percentileCont(durations, 0.5), 1),
    durationP95Ms: durations.length === 0 ? null : rounded(percentileCont(durations, 0.95), 1),
    humanWaitCount: waits.length,
    humanWaitTotalMs: waits.length === 0 ? null : waited,
    humanWaitAvgMs: waits.length === 0 ? null : rounded(waited / waits.length, 1),
  };
}

export function matchesRun(run: TeamRun, filter: TeamRunFilter): boolean {
  const start = run.startDate?.getTime() ?? null;
  return (
    (!filter.teamName || run.teamName === filter.teamName) &&
    (!filter.states?.length || filter.states.includes(run.state)) &&
    (!filter.startedAfter || (start !== null && start >= filter.startedAfter.getTime())) &&
    (!filter.startedBefore || (start !== null && start < filter.startedBefore.getTime())) &&
    (!filter.owner || run.owner === filter.owner)
  );
}

const RUN_KEYS: Record<TeamRunOrder['field'], (run: TeamRun) => number | string | null> = {
  START_DATE: (r) => r.startDate?.getTime() ?? null,
  END_DATE: (r) => r.endDate?.getTime() ?? null,
  TEAM_NAME: (r) => r.teamName,
  STATE: (r) => r.state,
};

/** ORDER BY <field> <direction> NULLS LAST, TEAM_EXEC_ID. */
export function sortRuns(runs: readonly TeamRun[], order: TeamRunOrder): TeamRun[] {
  const key = RUN_KEYS[order.field];
  const sign = order.direction === 'ASC' ? 1 : -1;
  return [...runs].sort((a, b) => {
    const x = key(a);
    const y = key(b);
    if (x !== y) {
      if (x === null) return 1;
      if (y === null) return -1;
      return sign * (x < y ? -1 : 1);
    }
    return binary(a.execId, b.execId);
  });
}

export const NEWEST_FIRST: TeamRunOrder = { field: 'START_DATE', direction: 'DESC' };

/** Tasks of one run, in TASK_ORDER. */
const time = (d: Date | null) => d?.getTime() ?? Number.POSITIVE_INFINITY;

/** Tasks of one run, by task order, then start (a task logged twice under one order). */
export function tasksOfRun(tasks: readonly TaskRun[], execId: string): TaskRun[] {
  return tasks
    .filter((t) => t.teamExecId === execId)
    .sort((a, b) => a.taskOrder - b.taskOrder || time(a.startDate) - time(b.startDate));
}

/** Calls of one run, by task order, then start, then invocation id. */
export function callsOfRun(calls: readonly ToolCall[], execId: string): ToolCall[] {
  return calls
    .filter((c) => c.teamExecId === execId)
    .sort(
      (a, b) =>
        (a.taskOrder ?? Number.POSITIVE_INFINITY) - (b.taskOrder ?? Number.POSITIVE_INFINITY) ||
        time(a.startDate) - time(b.startDate) ||
        binary(a.invocationId, b.invocationId),
    );
}

/** The calls a tool-call page lists, newest first (NULLS LAST), then by invocation id. */
export function callPage(calls: readonly ToolCall[], filter: ToolCallFilter): ToolCall[] {
  return calls
    .filter(
      (c) =>
        (!filter.toolName || c.toolName === filter.toolName) &&
        (!filter.agentName || c.agentName === filter.agentName) &&
        (!filter.teamExecId || c.teamExecId === filter.teamExecId),
    )
    .sort(
      (a, b) =>
        (b.startDate?.getTime() ?? Number.NEGATIVE_INFINITY) -
          (a.startDate?.getTime() ?? Number.NEGATIVE_INFINITY) ||
        binary(a.invocationId, b.invocationId),
    );
}
