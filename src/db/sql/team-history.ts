import type {
  PolledRun,
  TaskRun,
  TeamRun,
  TeamRunFilter,
  TeamRunOrder,
  TeamRunOrderField,
  TeamRunState,
  ToolCall,
} from '../../model/team.js';
import type { Viewer } from '../../model/viewer.js';
import { type Catalog, ownerColumn } from '../catalog.js';
import type { Row } from '../driver.js';
import { dateOrNull, jsonOrNull, num, numOrNull, str, strOrNull, textOrNull } from '../rows.js';
import { type Fragment, outputName, sql } from './fragment.js';
import { type JsonArrayParts, jsonArrayQuery } from './json-lists.js';
import { ownedBy, viewerOwns } from './owners.js';
import type { ColumnKey } from './pages.js';
import { perCatalog, query } from './query.js';

/**
 * Team, task and tool history (seed 003). Milliseconds between two TIMESTAMPs are computed
 * from the INTERVAL's fields, which both databases extract the same way.
 */
export function durationMsExpression(alias: Fragment): Fragment {
  const interval = sql`(${alias}.END_DATE - ${alias}.START_DATE)`;
  return sql`(EXTRACT(DAY FROM ${interval}) * 86400000 + EXTRACT(HOUR FROM ${interval}) * 3600000
    + EXTRACT(MINUTE FROM ${interval}) * 60000 + EXTRACT(SECOND FROM ${interval}) * 1000)`;
}

const ORDER_COLUMNS: Record<TeamRunOrderField, Fragment> = {
  START_DATE: sql`h.START_DATE`,
  END_DATE: sql`h.END_DATE`,
  TEAM_NAME: sql`h.TEAM_NAME`,
  STATE: sql`h.STATE`,
};

/** The keys of each order, made once: a keyset page keeps what it builds from them by them. */
const RUN_ORDER_KEYS = new Map<TeamRunOrderField, Map<TeamRunOrder['direction'], ColumnKey[]>>();

/** The keys of teamRuns in an order: its column, then TEAM_EXEC_ID to tell ties apart. */
export function runOrderKeys(order: TeamRunOrder): readonly ColumnKey[] {
  let byDirection = RUN_ORDER_KEYS.get(order.field);
  if (byDirection === undefined) {
    byDirection = new Map();
    RUN_ORDER_KEYS.set(order.field, byDirection);
  }
  let keys = byDirection.get(order.direction);
  if (keys === undefined) {
    keys = [
      {
        column: ORDER_COLUMNS[order.field],
        direction: order.direction,
        date: order.field === 'START_DATE' || order.field === 'END_DATE',
      },
      { column: sql`h.TEAM_EXEC_ID`, direction: 'ASC' },
    ];
    byDirection.set(order.direction, keys);
  }
  return keys;
}

/** The keys of root toolCalls: newest first, INVOCATION_ID to tell ties apart. */
export const TOOL_CALL_ORDER_KEYS: readonly ColumnKey[] = [
  { column: sql`START_DATE`, direction: 'DESC', date: true },
  { column: sql`INVOCATION_ID`, direction: 'ASC' },
];

/**
 * One row type of the history as a planned statement reads it (src/db/sql/history-plan.ts):
 * its view and alias, the select item of each output column, the property each column fills,
 * the properties always read (its keys), the columns ordering its lists (a total order or
 * not), and its decoder.
 * Every history row has TEAM_EXEC_ID: a plan bounds every list below a root by its runs.
 */
export interface RowTable<T> {
  readonly from: Fragment;
  readonly select: Readonly<Record<string, Fragment>>;
  readonly columns: readonly (readonly [keyof T & string, string])[];
  readonly keys: readonly (keyof T & string)[];
  readonly orderBy: readonly string[];
  /** No two rows share their values of `orderBy` (JsonArrayParts.totalOrder). */
  readonly totalOrder: boolean;
  readonly decode: (row: Row) => T;
}

/** A row type's columns: the property each fills and its select item, named as the column. */
type Columns<T> = readonly (readonly [keyof T & string, Fragment])[];

/** The table of a row type from its columns, each select item named by its output name. */
function rowTable<T>(
  table: Omit<RowTable<T>, 'select' | 'columns'> & { readonly columns: Columns<T> },
): RowTable<T> {
  const { columns, ...rest } = table;
  return {
    ...rest,
    select: Object.fromEntries(columns.map(([, item]) => [outputName(item), item])),
    columns: columns.map(([property, item]) => [property, outputName(item)] as const),
  };
}

/** A run in the newest-first window of its team (history.runsOfTeams, src/db/sql/history-plan.ts). */
export interface WindowedRun {
  readonly run: TeamRun;
  /** 1 for the team's newest run. */
  readonly rowNumber: number;
  /** The team's runs under the filter. */
  readonly totalCount: number;
}

export const teamHistorySql = perCatalog((catalog: Catalog) => {
  const runs = catalog.teamHistory;
  const runsView = sql.identifier(catalog, runs);
  const runOwner = ownerColumn(runs, ['TEAM_OWNER']);
  const runColumnsOf: Columns<TeamRun> = [
    ['execId', sql`h.TEAM_EXEC_ID`],
    ['teamName', sql`h.TEAM_NAME`],
    ['owner', sql`${runOwner ? sql`h.TEAM_OWNER` : sql`NULL`} AS TEAM_OWNER`],
    ['startDate', sql`h.START_DATE`],
    ['endDate', sql`h.END_DATE`],
    ['state', sql`h.STATE`],
    ['instanceId', sql`h.TEAM_INSTANCE_ID`],
  ];
  const runColumns = sql.join(
    runColumnsOf.map(([, item]) => item),
    ', ',
  );
  const toRun = (row: Row): TeamRun => ({
    execId: str(row.teamExecId),
    teamName: str(row.teamName),
    owner: strOrNull(row.teamOwner) ?? catalog.sessionUser,
    state: str(row.state) as TeamRunState,
    startDate: dateOrNull(row.startDate),
    endDate: dateOrNull(row.endDate),
    instanceId: numOrNull(row.teamInstanceId),
  });
  const tasks = catalog.taskHistory;
  const tasksView = sql.identifier(catalog, tasks);
  const conversation = catalog.columns.taskConversation
    ? sql.identifier(catalog, tasks, catalog.columns.taskConversation)
    : null;
  /** Runs whose task history records the conversation (runTeam returns only that id). */
  const conversationOf = (id: string) =>
    conversation && tasks.columns
      ? sql`EXISTS (SELECT 1 FROM ${tasksView} ct WHERE ct.TEAM_EXEC_ID = h.TEAM_EXEC_ID
          AND JSON_VALUE(ct.${conversation}, '$.conversation_id') = ${sql.bind('conversation_id', id)})`
      : sql`1 = 0`;
  const viewerRuns = (viewer: Viewer) =>
    viewerOwns(catalog, runs, viewer, ['TEAM_OWNER'])('h.TEAM_OWNER');

  /** The conditions of a run filter, then the viewer's restriction. */
  const runFilter = (viewer: Viewer, filter: TeamRunFilter): (Fragment | undefined)[] => {
    const states = [...new Set(filter.states ?? [])];
    return [
      filter.teamName ? sql`h.TEAM_NAME = ${sql.bind('team_name', filter.teamName)}` : undefined,
      states.length > 0
        ? sql`h.STATE IN (${sql.join(
            states.map((state, i) => sql.bind(`state${i}`, state)),
            ', ',
          )})`
        : undefined,
      filter.startedAfter
        ? sql`h.START_DATE >= ${sql.bind('started_after', filter.startedAfter)}`
        : undefined,
      filter.startedBefore
        ? sql`h.START_DATE < ${sql.bind('started_before', filter.startedBefore)}`
        : undefined,
      ownedBy(catalog, runs, ['TEAM_OWNER'], filter.owner, 'owner')('h.TEAM_OWNER'),
      filter.conversationId ? conversationOf(filter.conversationId) : undefined,
      viewerRuns(viewer),
    ];
  };

  // The large columns (CLOBs on Oracle: each one a LOB to fetch) are selected only when the
  // operation asks for them, as every other column; rows read without them carry null there,
  // and no field that reads them is resolved on such a row.
  const taskColumns: Columns<TaskRun> = [
    ['teamExecId', sql`TEAM_EXEC_ID`],
    ['teamName', sql`TEAM_NAME`],
    ['owner', ownerColumn(tasks, ['TASK_OWNER']) ? sql`TASK_OWNER` : sql`NULL AS TASK_OWNER`],
    ['agentName', sql`AGENT_NAME`],
    ['taskName', sql`TASK_NAME`],
    ['taskOrder', sql`TASK_ORDER`],
    [
      'conversationId',
      conversation
        ? sql`JSON_VALUE(${conversation}, '$.conversation_id') AS CONVERSATION_ID`
        : sql`NULL AS CONVERSATION_ID`,
    ],
    ['state', sql`STATE`],
    ['startDate', sql`START_DATE`],
    ['endDate', sql`END_DATE`],
    ['conversationParams', sql`${conversation ?? sql`NULL`} AS CONVERSATION_PARAMS`],
    ['input', sql`INPUT`],
    ['result', sql`RESULT`],
  ];
  const toTask = (row: Row): TaskRun => ({
    teamExecId: str(row.teamExecId),
    teamName: str(row.teamName),
    owner: strOrNull(row.taskOwner) ?? catalog.sessionUser,
    agentName: str(row.agentName),
    taskName: strOrNull(row.taskName),
    taskOrder: num(row.taskOrder),
    conversationParams: jsonOrNull(row.conversationParams),
    conversationId: strOrNull(row.conversationId),
    input: textOrNull(row.input),
    result: textOrNull(row.result),
    state: str(row.state) as TeamRunState,
    startDate: dateOrNull(row.startDate),
    endDate: dateOrNull(row.endDate),
  });

  const calls = catalog.toolHistory;
  const callsView = sql.identifier(catalog, calls);
  const callColumnsOf: Columns<ToolCall> = [
    ['invocationId', sql`INVOCATION_ID`],
    ['teamExecId', sql`TEAM_EXEC_ID`],
    ['taskOrder', sql`TASK_ORDER`],
    ['toolOwner', ownerColumn(calls, ['TOOL_OWNER']) ? sql`TOOL_OWNER` : sql`NULL AS TOOL_OWNER`],
    ['toolName', sql`TOOL_NAME`],
    ['agentName', sql`AGENT_NAME`],
    ['taskName', sql`TASK_NAME`],
    ['startDate', sql`START_DATE`],
    ['endDate', sql`END_DATE`],
    ['input', sql`INPUT`],
    ['output', sql`OUTPUT`],
    ['toolOutput', sql`TOOL_OUTPUT`],
  ];
  const callColumns = sql.join(
    callColumnsOf.map(([, item]) => item),
    ', ',
  );
  const toToolCall = (row: Row): ToolCall => ({
    invocationId: str(row.invocationId),
    teamExecId: str(row.teamExecId),
    taskOrder: numOrNull(row.taskOrder),
    toolOwner: strOrNull(row.toolOwner) ?? catalog.sessionUser,
    toolName: strOrNull(row.toolName),
    agentName: strOrNull(row.agentName),
    taskName: strOrNull(row.taskName),
    startDate: dateOrNull(row.startDate),
    endDate: dateOrNull(row.endDate),
    input: textOrNull(row.input),
    output: textOrNull(row.output),
    toolOutput: textOrNull(row.toolOutput),
  });
  /**
   * The one visibility rule below the runs (docs/oracle.md): a task or tool call row is
   * visible exactly when its run is, whatever its own TASK_OWNER or TOOL_OWNER says. Inside
   * the same statement, so statement counts do not change.
   */
  const runVisible = (viewer: Viewer, alias: Fragment): Fragment | undefined => {
    const owner = viewerOwns(catalog, runs, viewer, ['TEAM_OWNER'])('r.TEAM_OWNER');
    if (!owner || owner.noRows) return owner;
    return sql`EXISTS (SELECT 1 FROM ${runsView} r WHERE r.TEAM_EXEC_ID = ${alias}.TEAM_EXEC_ID AND ${owner})`;
  };

  const waitingSources = [
    ...(calls.columns
      ? [
          sql`(SELECT MAX(c.START_DATE) FROM ${callsView} c WHERE c.TEAM_EXEC_ID = h.TEAM_EXEC_ID AND c.END_DATE IS NULL)`,
        ]
      : []),
    ...(tasks.columns
      ? [
          sql`(SELECT MAX(t.START_DATE) FROM ${tasksView} t WHERE t.TEAM_EXEC_ID = h.TEAM_EXEC_ID AND t.STATE = 'WAITING_FOR_HUMAN')`,
        ]
      : []),
  ];
  // Oracle's COALESCE takes two or more arguments.
  const waitingSince =
    waitingSources.length > 1
      ? sql`COALESCE(${sql.join(waitingSources, ', ')})`
      : (waitingSources[0] ?? sql`CAST(NULL AS TIMESTAMP)`);

  const runTable = rowTable<TeamRun>({
    from: sql`${runsView} h`,
    columns: runColumnsOf,
    keys: ['execId'],
    orderBy: ['TEAM_EXEC_ID'],
    totalOrder: true,
    decode: toRun,
  });
  const taskTable = rowTable<TaskRun>({
    from: sql`${tasksView} t`,
    columns: taskColumns,
    keys: ['teamExecId', 'taskOrder'],
    // TEAM_EXEC_ID groups the tasks by run, TASK_ORDER orders them and finds a task's calls;
    // a task logged twice under one TASK_ORDER (seed 003 documents no key) comes in the order
    // it started.
    orderBy: ['TEAM_EXEC_ID', 'TASK_ORDER', 'START_DATE'],
    totalOrder: false,
    decode: toTask,
  });
  const callTable = rowTable<ToolCall>({
    from: sql`${callsView} tc`,
    columns: callColumnsOf,
    keys: ['teamExecId', 'taskOrder'],
    orderBy: ['TEAM_EXEC_ID', 'TASK_ORDER', 'START_DATE', 'INVOCATION_ID'],
    totalOrder: true,
    decode: toToolCall,
  });

  /** Every column of `table`'s rows under `conditions`, as a positional JSON list. */
  const everyColumnOf = <T>(
    table: RowTable<T>,
    conditions: readonly (Fragment | undefined)[],
  ): JsonArrayParts => {
    const members = table.columns.map(([, column]) => column);
    return {
      select: members.map((column) => table.select[column] as Fragment),
      members,
      from: sql`${table.from} ${sql.where(...conditions)}`,
      orderBy: table.orderBy,
      totalOrder: table.totalOrder,
    };
  };

  return {
    /** The row types as planned statements read them (src/db/sql/history-plan.ts). */
    tables: { TeamRun: runTable, TaskRun: taskTable, ToolCall: callTable },
    /**
     * What tells a run's team apart, as output columns of the runs (h): its owner and name
     * where the view names owners (DBA_: two owners may each have a team of one name), its
     * name where the view is one owner's (USER_). Windows partition and lists order by it.
     */
    teamOfRun: runOwner ? (['TEAM_OWNER', 'TEAM_NAME'] as const) : (['TEAM_NAME'] as const),
    runFilter,
    viewerRuns,
    readable: { runs, tasks, calls },
    runVisible,
    runsByIds: (viewer: Viewer) => (ids: Fragment) =>
      query(
        'teamRuns.byIds',
        sql`SELECT ${runColumns} FROM ${runsView} h
         ${sql.where(sql`h.TEAM_EXEC_ID IN (${ids})`, viewerRuns(viewer))}`,
        toRun,
      ),
    /**
     * The live poller's one statement per cycle, over every owner: every run that has not
     * ended, plus those that ended at or after `since`. Runs that wait for a human carry the
     * start of the tool call they are blocked on (or of their waiting task) as WAITING_SINCE.
     */
    livePoll: (since: Date) =>
      query(
        'teamRuns.live',
        sql`SELECT ${runColumns},
           CASE WHEN h.STATE = 'WAITING_FOR_HUMAN' THEN ${waitingSince} END AS WAITING_SINCE
         FROM ${runsView} h
         WHERE h.STATE IN ('RUNNING', 'WAITING_FOR_HUMAN', 'RESUMING') OR h.END_DATE >= ${sql.bind('since', since)}`,
        (row): PolledRun => ({ ...toRun(row), waitingSince: dateOrNull(row.waitingSince) }),
      ),
    tasksByRuns: (viewer: Viewer) => (ids: Fragment) =>
      jsonArrayQuery(
        'taskRuns.byRuns',
        everyColumnOf(taskTable, [sql`TEAM_EXEC_ID IN (${ids})`, runVisible(viewer, sql`t`)]),
        toTask,
      ),
    toolCallsByRuns: (viewer: Viewer) => (ids: Fragment) =>
      jsonArrayQuery(
        'toolCalls.byRuns',
        everyColumnOf(callTable, [sql`TEAM_EXEC_ID IN (${ids})`, runVisible(viewer, sql`tc`)]),
        toToolCall,
      ),
    toolCallsByIds: (viewer: Viewer) => (ids: Fragment) =>
      query(
        'toolCalls.byIds',
        sql`SELECT ${callColumns} FROM ${callsView} tc
         ${sql.where(sql`INVOCATION_ID IN (${ids})`, runVisible(viewer, sql`tc`))}`,
        toToolCall,
      ),
  };
});
