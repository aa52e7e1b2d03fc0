import type { TeamRunOrderField } from '../../model/team.js';
import { type Catalog, ownerColumn } from '../catalog.js';
import type { Statement } from '../driver.js';
import { OWNED_BY_VIEWER, PAGE, perCatalog, statement, whereClause } from './statement.js';

/**
 * Team, task and tool history (seed 003). Milliseconds between two TIMESTAMPs are computed
 * from the INTERVAL's fields, which both databases extract the same way.
 */
export function durationMsExpression(alias: string): string {
  const interval = `(${alias}.END_DATE - ${alias}.START_DATE)`;
  return `(EXTRACT(DAY FROM ${interval}) * 86400000 + EXTRACT(HOUR FROM ${interval}) * 3600000
    + EXTRACT(MINUTE FROM ${interval}) * 60000 + EXTRACT(SECOND FROM ${interval}) * 1000)`;
}

/** Which optional run filters a statement carries; values always travel as binds. */
export interface RunFilterShape {
  readonly teamName: boolean;
  /** Number of states in the IN list (0: no state filter). */
  readonly states: number;
  readonly startedAfter: boolean;
  readonly startedBefore: boolean;
  readonly owner: boolean;
  /** Only the viewer's runs (TEAM_OWNER = :viewer_owner). */
  readonly restricted: boolean;
}

const ORDER_COLUMNS: Record<TeamRunOrderField, string> = {
  START_DATE: 'h.START_DATE',
  END_DATE: 'h.END_DATE',
  TEAM_NAME: 'h.TEAM_NAME',
  STATE: 'h.STATE',
};

export interface ToolCallFilterShape {
  readonly toolName: boolean;
  readonly agentName: boolean;
  readonly teamExecId: boolean;
  /** Only calls of the viewer's runs (see runVisible). */
  readonly restricted: boolean;
}

export function stateList(count: number): string {
  return Array.from({ length: count }, (_, i) => `:state${i}`).join(', ');
}

export const teamHistorySql = perCatalog((catalog: Catalog) => {
  const runs = catalog.teamHistory;
  const runOwner = ownerColumn(runs, ['TEAM_OWNER']);
  const runColumns = `h.TEAM_EXEC_ID, h.TEAM_NAME, ${runOwner ? 'h.TEAM_OWNER' : 'NULL'} AS TEAM_OWNER,
    h.START_DATE, h.END_DATE, h.STATE, h.TEAM_INSTANCE_ID`;

  const conditions = (shape: RunFilterShape): string[] => {
    const list: string[] = [];
    if (shape.teamName) list.push('h.TEAM_NAME = :team_name');
    if (shape.states > 0) list.push(`h.STATE IN (${stateList(shape.states)})`);
    if (shape.startedAfter) list.push('h.START_DATE >= :started_after');
    if (shape.startedBefore) list.push('h.START_DATE < :started_before');
    if (shape.owner) list.push('h.TEAM_OWNER = :owner');
    if (shape.restricted) list.push(`h.TEAM_OWNER = ${OWNED_BY_VIEWER}`);
    return list;
  };

  const tasks = catalog.taskHistory;
  const conversation = catalog.columns.taskConversation;
  const taskColumns = `TEAM_EXEC_ID, TEAM_NAME, ${ownerColumn(tasks, ['TASK_OWNER']) ? 'TASK_OWNER' : 'NULL AS TASK_OWNER'},
    AGENT_NAME, TASK_NAME, TASK_ORDER,
    ${conversation ? `${conversation} AS CONVERSATION_PARAMS, JSON_VALUE(${conversation}, '$.conversation_id') AS CONVERSATION_ID` : 'NULL AS CONVERSATION_PARAMS, NULL AS CONVERSATION_ID'},
    INPUT, RESULT, STATE, START_DATE, END_DATE`;

  const calls = catalog.toolHistory;
  const callColumns = `INVOCATION_ID, TEAM_EXEC_ID, TASK_ORDER,
    ${ownerColumn(calls, ['TOOL_OWNER']) ? 'TOOL_OWNER' : 'NULL AS TOOL_OWNER'},
    TOOL_NAME, AGENT_NAME, TASK_NAME, START_DATE, END_DATE, INPUT, OUTPUT, TOOL_OUTPUT`;

  const viewerOwns = (column: string, restricted: boolean) =>
    restricted ? `AND ${column} = ${OWNED_BY_VIEWER}` : '';
  /**
   * The one visibility rule below the runs (docs/oracle.md): a task or tool call row is
   * visible exactly when its run is, whatever its own TASK_OWNER or TOOL_OWNER says.
   * Restricted implies the run view has TEAM_OWNER (repositories/views.ts, ownerAccess).
   */
  const runVisible = (alias: string) =>
    `EXISTS (SELECT 1 FROM ${runs.name} r WHERE r.TEAM_EXEC_ID = ${alias}.TEAM_EXEC_ID AND r.TEAM_OWNER = ${OWNED_BY_VIEWER})`;
  const andRunVisible = (alias: string, restricted: boolean) =>
    restricted ? `AND ${runVisible(alias)}` : '';
  const toolCallWhere = (shape: ToolCallFilterShape): string =>
    whereClause([
      ...(shape.toolName ? ['TOOL_NAME = :tool_name'] : []),
      ...(shape.agentName ? ['AGENT_NAME = :agent_name'] : []),
      ...(shape.teamExecId ? ['TEAM_EXEC_ID = :team_exec_id'] : []),
      ...(shape.restricted ? [runVisible('tc')] : []),
    ]);
  const waitingSources = [
    ...(calls.columns
      ? [
          `(SELECT MAX(c.START_DATE) FROM ${calls.name} c WHERE c.TEAM_EXEC_ID = h.TEAM_EXEC_ID AND c.END_DATE IS NULL)`,
        ]
      : []),
    ...(tasks.columns
      ? [
          `(SELECT MAX(t.START_DATE) FROM ${tasks.name} t WHERE t.TEAM_EXEC_ID = h.TEAM_EXEC_ID AND t.STATE = 'WAITING_FOR_HUMAN')`,
        ]
      : []),
  ];
  // Oracle's COALESCE takes two or more arguments.
  const waitingSince =
    waitingSources.length > 1
      ? `COALESCE(${waitingSources.join(', ')})`
      : (waitingSources[0] ?? 'CAST(NULL AS TIMESTAMP)');

  return {
    runsPage: (
      shape: RunFilterShape,
      order: TeamRunOrderField,
      direction: 'ASC' | 'DESC',
    ): Statement =>
      statement(
        'teamRuns.page',
        `SELECT ${runColumns}, COUNT(*) OVER () AS TOTAL_COUNT
         FROM ${runs.name} h ${whereClause(conditions(shape))}
         ORDER BY ${ORDER_COLUMNS[order]} ${direction} NULLS LAST, h.TEAM_EXEC_ID ${PAGE}`,
      ),
    runsCount: (shape: RunFilterShape): Statement =>
      statement(
        'teamRuns.count',
        `SELECT COUNT(*) AS TOTAL_COUNT FROM ${runs.name} h ${whereClause(conditions(shape))}`,
      ),
    /**
     * The newest runs of each of several teams: one window per team, one statement. Each
     * team's first run comes back too (RN = 1, dropped unless in the window), so a window
     * past a team's last run still carries the team's total.
     */
    runsByTeams: (teams: string, shape: RunFilterShape): Statement =>
      statement(
        'teamRuns.byTeams',
        `SELECT * FROM (
           SELECT ${runColumns},
             ROW_NUMBER() OVER (PARTITION BY h.TEAM_NAME ORDER BY h.START_DATE DESC NULLS LAST, h.TEAM_EXEC_ID) AS RN,
             COUNT(*) OVER (PARTITION BY h.TEAM_NAME) AS TOTAL_COUNT
           FROM ${runs.name} h
           ${whereClause([`h.TEAM_NAME IN (${teams})`, ...conditions(shape)])}
         ) w
         WHERE (w.RN > :page_offset AND w.RN <= :page_end) OR w.RN = 1
         ORDER BY w.TEAM_NAME, w.RN`,
      ),
    runsByIds: (ids: string, restricted: boolean): Statement =>
      statement(
        'teamRuns.byIds',
        `SELECT ${runColumns} FROM ${runs.name} h
         WHERE h.TEAM_EXEC_ID IN (${ids}) ${viewerOwns('h.TEAM_OWNER', restricted)}`,
      ),
    waitingByTeams: (teams: string, restricted: boolean): Statement =>
      statement(
        'teamRuns.waitingByTeams',
        `SELECT ${runColumns} FROM ${runs.name} h
         WHERE h.TEAM_NAME IN (${teams}) AND h.STATE = 'WAITING_FOR_HUMAN' ${viewerOwns('h.TEAM_OWNER', restricted)}
         ORDER BY h.TEAM_NAME, h.START_DATE, h.TEAM_EXEC_ID`,
      ),
    /**
     * The live poller's one statement per cycle: every run that has not ended, plus those
     * that ended at or after :since. Runs that wait for a human carry the start of the tool
     * call they are blocked on (or of their waiting task) as WAITING_SINCE.
     */
    livePoll: (): Statement =>
      statement(
        'teamRuns.live',
        `SELECT ${runColumns},
           CASE WHEN h.STATE = 'WAITING_FOR_HUMAN' THEN ${waitingSince} END AS WAITING_SINCE
         FROM ${runs.name} h
         WHERE h.STATE IN ('RUNNING', 'WAITING_FOR_HUMAN', 'RESUMING') OR h.END_DATE >= :since`,
      ),
    tasksByRuns: (ids: string, restricted: boolean): Statement =>
      statement(
        'taskRuns.byRuns',
        `SELECT ${taskColumns} FROM ${tasks.name} t
         WHERE TEAM_EXEC_ID IN (${ids}) ${andRunVisible('t', restricted)} ORDER BY TEAM_EXEC_ID, TASK_ORDER`,
      ),
    toolCallsByRuns: (ids: string, restricted: boolean): Statement =>
      statement(
        'toolCalls.byRuns',
        `SELECT ${callColumns} FROM ${calls.name} tc
         WHERE TEAM_EXEC_ID IN (${ids}) ${andRunVisible('tc', restricted)}
         ORDER BY TEAM_EXEC_ID, TASK_ORDER, START_DATE, INVOCATION_ID`,
      ),
    toolCallsByIds: (ids: string, restricted: boolean): Statement =>
      statement(
        'toolCalls.byIds',
        `SELECT ${callColumns} FROM ${calls.name} tc
         WHERE INVOCATION_ID IN (${ids}) ${andRunVisible('tc', restricted)}`,
      ),
    toolCallsPage: (shape: ToolCallFilterShape): Statement =>
      statement(
        'toolCalls.page',
        `SELECT ${callColumns}, COUNT(*) OVER () AS TOTAL_COUNT FROM ${calls.name} tc
         ${toolCallWhere(shape)} ORDER BY START_DATE DESC NULLS LAST, INVOCATION_ID ${PAGE}`,
      ),
    toolCallsCount: (shape: ToolCallFilterShape): Statement =>
      statement(
        'toolCalls.count',
        `SELECT COUNT(*) AS TOTAL_COUNT FROM ${calls.name} tc ${toolCallWhere(shape)}`,
      ),
  };
});
