import type { ViewScope } from '../config.js';
import type { Driver } from './driver.js';

/**
 * Which views the API reads and which column names they actually have, resolved once at
 * start-up from the data dictionary. Releases differ (the reference lists the variants), so
 * every SQL builder asks this mapping instead of hard-wiring a name.
 */
export interface Catalog {
  readonly scope: ViewScope;
  /** The connected user: the owner of every row of a USER_ view. */
  readonly sessionUser: string;
  readonly agents: ViewInfo;
  readonly execStat: ViewInfo;
  readonly execStatCluster: ViewInfo;
  readonly teams: ViewInfo;
  readonly teamAttributes: ViewInfo;
  readonly tools: ViewInfo;
  readonly toolAttributes: ViewInfo;
  readonly taskAttributes: ViewInfo;
  readonly teamHistory: ViewInfo;
  readonly taskHistory: ViewInfo;
  readonly toolHistory: ViewInfo;
  /** Scheduler job runs: the error of a failed task (TaskRun.failure). */
  readonly jobRunDetails: ViewInfo;
  /** Select AI conversation prompts: what a task's LLM was asked (TaskRun.prompts). */
  readonly conversationPrompts: ViewInfo;
  readonly columns: ColumnVariants;
}

/** Column names that differ between releases, resolved to the one this database has. */
export interface ColumnVariants {
  /** The task-history JSON column: COVERSATION_PARAM as documented, or a later spelling. */
  readonly taskConversation: string | null;
  /** Team catalog views name the team AGENT_TEAM_NAME (history views use TEAM_NAME). */
  readonly teamName: string;
  /** The generated tool id (A2A skills[].id); its column name is unconfirmed. */
  readonly toolId: string | null;
}

export interface ViewInfo {
  /** Upper-case view name as Oracle spells it. */
  readonly name: string;
  /** Null when the view is missing or not granted. */
  readonly columns: ReadonlySet<string> | null;
  /** Each column's data type as the dictionary spells it; absent when the view is. */
  readonly columnTypes?: ReadonlyMap<string, string>;
  /** The privilege that makes the view readable, for the error message when it is not. */
  readonly grant: string;
}

const scoped = (scope: ViewScope, base: string) => `${scope === 'dba' ? 'DBA' : 'USER'}_${base}`;

function viewNames(scope: ViewScope) {
  return {
    agents: scoped(scope, 'AI_AGENTS'),
    execStat: 'V$AGENT_EXEC_STAT',
    execStatCluster: 'GV$AGENT_EXEC_STAT',
    teams: scoped(scope, 'AI_AGENT_TEAMS'),
    teamAttributes: scoped(scope, 'AI_AGENT_TEAM_ATTRIBUTES'),
    tools: scoped(scope, 'AI_AGENT_TOOLS'),
    toolAttributes: scoped(scope, 'AI_AGENT_TOOL_ATTRIBUTES'),
    taskAttributes: scoped(scope, 'AI_AGENT_TASK_ATTRIBUTES'),
    teamHistory: scoped(scope, 'AI_AGENT_TEAM_HISTORY'),
    taskHistory: scoped(scope, 'AI_AGENT_TASK_HISTORY'),
    toolHistory: scoped(scope, 'AI_AGENT_TOOL_HISTORY'),
    jobRunDetails: scoped(scope, 'SCHEDULER_JOB_RUN_DETAILS'),
    conversationPrompts: scoped(scope, 'CLOUD_AI_CONVERSATION_PROMPTS'),
  };
}

/** The privilege that makes a view readable, named in the error when it is not. */
export function grantFor(view: string): string {
  if (view.startsWith('V$') || view.startsWith('GV$'))
    return `SELECT ON ${view.replace('$', '_$')}`;
  if (view.startsWith('DBA_')) return `SELECT ON ${view} (or SELECT_CATALOG_ROLE)`;
  if (view === 'USER_SCHEDULER_JOB_RUN_DETAILS') return 'none (a public dictionary view)';
  if (view.startsWith('USER_CLOUD_AI_')) return 'EXECUTE ON DBMS_CLOUD_AI for the owning user';
  return `EXECUTE ON DBMS_CLOUD_AI_AGENT / DBMS_AI_AGENT for the owning user`;
}

/** `sessionUser` may still be on its way (src/db/discover.ts): the dictionary does not wait for it. */
export async function discoverCatalog(
  driver: Driver,
  scope: ViewScope,
  sessionUser: string | PromiseLike<string>,
): Promise<Catalog> {
  const names = viewNames(scope);
  const [found, user] = await Promise.all([driver.columnsOf(Object.values(names)), sessionUser]);
  const info = (name: string): ViewInfo => {
    const types = found.get(name);
    return types
      ? { name, columns: new Set(types.keys()), columnTypes: types, grant: grantFor(name) }
      : { name, columns: null, grant: grantFor(name) };
  };
  const teams = info(names.teams);
  const tools = info(names.tools);
  const taskHistory = info(names.taskHistory);
  return {
    scope,
    sessionUser: user,
    columns: {
      taskConversation: firstColumn(taskHistory, [
        'COVERSATION_PARAM',
        'CONVERSATION_PARAMS',
        'CONVERSATION_PARAM',
      ]),
      teamName: firstColumn(teams, ['AGENT_TEAM_NAME', 'TEAM_NAME']) ?? 'AGENT_TEAM_NAME',
      toolId: firstColumn(tools, ['TOOL_ID', 'ID']),
    },
    agents: info(names.agents),
    execStat: info(names.execStat),
    execStatCluster: info(names.execStatCluster),
    teams,
    teamAttributes: info(names.teamAttributes),
    tools,
    toolAttributes: info(names.toolAttributes),
    taskAttributes: info(names.taskAttributes),
    teamHistory: info(names.teamHistory),
    taskHistory,
    toolHistory: info(names.toolHistory),
    jobRunDetails: info(names.jobRunDetails),
    conversationPrompts: info(names.conversationPrompts),
  };
}

/** Every view of the catalog, in declaration order. */
export function catalogViews(catalog: Catalog): ViewInfo[] {
  return Object.values(catalog).filter(
    (value): value is ViewInfo => typeof value === 'object' && value !== null && 'grant' in value,
  );
}

export function missingViews(catalog: Catalog): ViewInfo[] {
  return catalogViews(catalog).filter((view) => view.columns === null);
}

/**
 * `VIEW.COLUMN` → data type of every date column (`DATE`, `TIMESTAMP(6)`, `TIMESTAMP(6) WITH
 * TIME ZONE`, …): what the driver's time-zone handling has to match, reported at start-up.
 */
export function dateColumnTypes(catalog: Catalog): Map<string, string> {
  const dates = new Map<string, string>();
  for (const view of catalogViews(catalog)) {
    for (const [column, type] of view.columnTypes ?? []) {
      if (/^(DATE|TIMESTAMP)/.test(type)) dates.set(`${view.name}.${column}`, type);
    }
  }
  return dates;
}

/**
 * Which of the two documented USER_/DBA_AI_AGENTS the database has: the Agent Spec view
 * (CREATE_TIME, INPUTS, OUTPUTS; seed 002) or the Select AI Agent one (CREATED, STATUS,
 * DESCRIPTION, LAST_MODIFIED). Both have AGENT_ID, so it does not tell them apart.
 */
export function agentsViewShape(view: ViewInfo): 'agentSpec' | 'selectAi' | 'unknown' {
  const has = (column: string) => view.columns?.has(column) ?? false;
  if (has('CREATE_TIME') || has('INPUTS')) return 'agentSpec';
  if (has('CREATED') || has('STATUS')) return 'selectAi';
  return 'unknown';
}

/** The view's owner column when it has one (DBA_ forms), else null (USER_ forms). */
export function ownerColumn(
  view: ViewInfo,
  candidates: readonly string[] = ['OWNER'],
): string | null {
  return firstColumn(view, candidates);
}

/** The first of the candidate names that the view has (known variants across releases). */
export function firstColumn(view: ViewInfo, candidates: readonly string[]): string | null {
  return candidates.find((c) => view.columns?.has(c)) ?? null;
}
