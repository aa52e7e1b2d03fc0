import type { Catalog } from '../db/catalog.js';
import type { Discovery } from '../db/discover.js';
import type { Driver, Row } from '../db/driver.js';
import { agentSql } from '../db/sql/agents.js';
import { execStatSql } from '../db/sql/exec-stats.js';
import { executeAgentArguments } from '../db/sql/execute-agent.js';
import type { Fragment } from '../db/sql/fragment.js';
import { historyPlanSql, type PlanResult, type PlanRoot } from '../db/sql/history-plan.js';
import { inList } from '../db/sql/in-lists.js';
import type { PagedQuery } from '../db/sql/pages.js';
import { fetchRows, type Query } from '../db/sql/query.js';
import {
  createJobPrivilege,
  runTeamCompiles,
  runTeamJobName,
  runTeamSql,
} from '../db/sql/run-team.js';
import {
  describeAgentProbe,
  sessionQuery,
  timeZoneQuery,
  versionQuery,
} from '../db/sql/session.js';
import { taskDetailsSql } from '../db/sql/task-details.js';
import { teamActivitySql } from '../db/sql/team-activity.js';
import {
  runOrderKeys,
  TOOL_CALL_ORDER_KEYS,
  teamHistorySql,
  type WindowedRun,
} from '../db/sql/team-history.js';
import { teamSql } from '../db/sql/teams.js';
import { type ActivityFilter, activityWindow } from '../model/activity.js';
import type { Agent } from '../model/agent.js';
import type { ExecStatFilter, ExecStatOrderField } from '../model/exec-stat.js';
import type { KeysetWindow, Position, Positioned, SortKey } from '../model/keyset.js';
import {
  everyColumn,
  type ListPlan,
  plannedChild,
  RELATIONS,
  type Relation,
} from '../model/plan.js';
import type {
  TaskRun,
  TeamRun,
  TeamRunFilter,
  TeamRunOrderField,
  ToolCall,
  ToolCallFilter,
} from '../model/team.js';
import { ANONYMOUS_ADMIN, type Viewer } from '../model/viewer.js';

/**
 * The statement registry, shipped with the product: the contract suite
 * (test/oracle/contract.test.ts) and `npm run oracle:check` both run it.
 *
 * Every statement the repositories can issue, and start-up's own: the query values of
 * src/db/sql, built the way the repositories build them (each carries its own binds), for an
 * administrator and a non-admin viewer, filters present and absent, every order field and
 * direction, over both view scopes (through the catalogs). Queries that cannot match (a USER_ view and another
 * owner) are never sent and are left out. The modules of src/db/sql that this registry
 * enumerates are listed in ENUMERATED_MODULES; a test fails for any other, so a new module
 * cannot go untested.
 */
export const ENUMERATED_MODULES = [
  'agents.ts',
  'exec-stats.ts',
  // Its ALL_ARGUMENTS look-up is a query (start-up's, below); its call executes an agent, so
  // oracle:check reports what the look-up found instead (CAPABILITY_PROBES), never calling it.
  'execute-agent.ts',
  'history-plan.ts',
  // Not a query: its block creates a scheduler job, so only its NOT_WAITING path runs here
  // (runTeamProbe, oracle:check); test/hitl/run-team-sql.test.ts checks its binds.
  'run-team.ts',
  'session.ts',
  'task-details.ts',
  'team-activity.ts',
  'teams.ts',
  'team-history.ts',
  // The parts statements are built of, no statement of their own.
  'fragment.ts',
  'in-lists.ts',
  'json-lists.ts',
  'owners.ts',
  'pages.ts',
  'query.ts',
];

export type RegisteredStatement = Query<unknown>;

/** Every ExecStatOrderField (the record makes the compiler flag a field left out). */
const ORDER_FIELDS: Record<ExecStatOrderField, true> = {
  TOTAL_TIME: true,
  LLM_TIME: true,
  TOOL_TIME: true,
  LLM_TIME_PCT: true,
  TOOL_TIME_PCT: true,
  INPUT_TOKENS: true,
  OUTPUT_TOKENS: true,
  LLM_CALLS: true,
  TOOL_CALLS: true,
};
export const EXEC_STAT_ORDER_FIELDS = Object.keys(ORDER_FIELDS) as ExecStatOrderField[];

/** The values the registry hands to the builders, none of which may appear in any text. */
const VALUE = {
  owner: 'ANALYST',
  nameContains: 'INSIGHT',
  teamName: 'REPORT_SUMMARY_AGENT_TEAM',
  toolName: 'SUMMARIZE_REPORT',
  agentName: 'SUMMARIZER',
  teamExecId: 'NO_SUCH_RUN',
  conversationId: '6f1c2a1e-0d3b-4b8e-9a55-3c2f1e0b7d41',
} as const;
export const VALUES_GIVEN: readonly string[] = Object.values(VALUE);

const window = { offset: 0, limit: 5 };
const VIEWERS: readonly Viewer[] = [
  ANONYMOUS_ADMIN,
  { owner: VALUE.owner, admin: false, subject: VALUE.owner },
];

/**
 * The windows of a keyset order: the first and the last page, after a row, before it (read
 * backwards), between two rows, each place with its values or with nulls where a key may
 * hold one (the statement text differs: the comparison is written for the null).
 */
function keysetWindows(keys: readonly SortKey[]): KeysetWindow[] {
  const place = (nulls: boolean): Position =>
    keys.map((key, i) => {
      if (nulls && i < keys.length - 1) return null;
      return key.date
        ? { at: new Date('2026-09-15T08:30:00.123Z'), belowMs: '456' }
        : VALUE.teamExecId;
    });
  return [
    { backward: false, limit: 5 },
    { backward: true, limit: 5 },
    ...[false, true].flatMap((nulls): KeysetWindow[] => [
      { after: place(nulls), backward: false, limit: 5 },
      { before: place(nulls), backward: true, limit: 5 },
      { after: place(nulls), before: place(!nulls), backward: false, limit: 5 },
    ]),
  ];
}

const both = <T>(paging: PagedQuery<T>): Query<unknown>[] => [paging.page, paging.count];

/** Every combination of the given optional values (absent, then present). */
function combinations<T extends object>(options: { [K in keyof T]: readonly T[K][] }): T[] {
  let result: Record<string, unknown>[] = [{}];
  for (const [key, values] of Object.entries(options) as [string, unknown[]][]) {
    result = result.flatMap((partial) => values.map((value) => ({ ...partial, [key]: value })));
  }
  return result as T[];
}

const lists = {
  agents: [
    inList('name', ['ORDER_REQUEST_FLOW']),
    inList('name', ['ORDER_REQUEST_FLOW', 'NO_SUCH_AGENT', 'INCIDENT_TRIAGE']),
  ],
  teams: [inList('team', ['REPORT_SUMMARY_AGENT_TEAM', 'SALES_INSIGHT_TEAM', 'NO_SUCH_TEAM'])],
  runs: [inList('exec', ['NO_SUCH_RUN', 'ANOTHER'])],
  calls: [inList('invocation', ['NO_SUCH_CALL'])],
};

const forLists = (
  build: (list: Fragment) => Query<unknown>,
  fragments: readonly Fragment[],
): Query<unknown>[] => fragments.map(build);

function agentStatements(catalog: Catalog, viewer: Viewer): Query<unknown>[] {
  const sql = agentSql(catalog);
  return [
    ...both(sql.page(viewer, window)),
    ...[true, false].flatMap((details) => forLists(sql.byNames(viewer, details), lists.agents)),
  ];
}

function teamStatements(catalog: Catalog, viewer: Viewer): Query<unknown>[] {
  const sql = teamSql(catalog);
  const filters = combinations<{ nameContains: string | null; owner: string | null }>({
    nameContains: [null, VALUE.nameContains],
    owner: [null, VALUE.owner],
  });
  return [
    ...filters.flatMap((filter) => both(sql.page(viewer, filter, window))),
    sql.names(viewer),
    ...[sql.byNames, sql.toolsByTeams, sql.statsByTeams].flatMap((build) =>
      forLists(build(viewer), lists.teams),
    ),
  ];
}

function historyStatements(catalog: Catalog, viewer: Viewer): Query<unknown>[] {
  const sql = teamHistorySql(catalog);
  return [
    ...forLists(sql.runsByIds(viewer), lists.runs),
    sql.livePoll(new Date('2026-09-01T00:00:00Z')),
    ...forLists(sql.tasksByRuns(viewer), lists.runs),
    ...forLists(sql.toolCallsByRuns(viewer), lists.runs),
    ...forLists(sql.toolCallsByIds(viewer), lists.calls),
  ];
}

const related = (relation: Relation, plan: ListPlan) =>
  ({ kind: 'relation', relation, plan }) as const;

/**
 * The plans a history root is registered with: the keys alone, and every column of every
 * relation the schema can plan below it, each relation once per type it leaves from
 * (test/plan.test.ts checks these against every relation field the schema declares).
 */
export function plansFrom(type: 'TeamRun' | 'TaskRun' | 'ToolCall'): ListPlan[] {
  const team = related(RELATIONS.runTeam, everyColumn('Team'));
  const runUp = related(RELATIONS.taskTeamRun, everyColumn('TeamRun', [['team', team]]));
  const taskUp = related(RELATIONS.callTaskRun, everyColumn('TaskRun', [['teamRun', runUp]]));
  const calls = everyColumn('ToolCall', [['taskRun', taskUp]]);
  const tasks = everyColumn('TaskRun', [
    ['agent', related(RELATIONS.taskAgent, everyColumn('Agent'))],
    ['toolCalls', related(RELATIONS.taskToolCalls, calls)],
    ['teamRun', runUp],
  ]);
  const runs = everyColumn('TeamRun', [
    ['team', team],
    ['tasks', related(RELATIONS.runTasks, tasks)],
    ['toolCalls', related(RELATIONS.runToolCalls, calls)],
    [
      'waitingFor',
      {
        kind: 'group',
        members: new Map([
          ['tasks', { relation: RELATIONS.runTasks, plan: everyColumn('TaskRun') }],
          ['toolCalls', { relation: RELATIONS.runToolCalls, plan: everyColumn('ToolCall') }],
        ]),
      },
    ],
    [
      'run',
      {
        kind: 'self',
        plan: everyColumn('TeamRun', [
          ['tasks', related(RELATIONS.runTasks, everyColumn('TaskRun'))],
        ]),
      },
    ],
  ]);
  const keys: ListPlan = { type, columns: new Set(), children: new Map(), key: '' };
  return [keys, { TeamRun: runs, TaskRun: tasks, ToolCall: calls }[type]];
}

/**
 * Every planned statement of the history roots (src/db/sql/history-plan.ts): each root's
 * variants (filters, orders, windows) with the keys alone, and each root once with every
 * relation the schema can plan below it (the lists' text does not depend on the root's).
 */
/**
 * A planned root's statement with the keys alone, and with every plannable relation below it:
 * its catalog rows (teams, agents) as lists of the statement, and left to the cross-request
 * catalog cache (PlanOptions.catalogApart), each its own text.
 */
function plannedVariants(catalog: Catalog, viewer: Viewer) {
  const sql = historyPlanSql(catalog);
  const variant =
    (which: 0 | 1, catalogApart = false) =>
    (root: PlanRoot<unknown>) =>
      sql.planned(viewer, root, plansFrom(root.type)[which] as ListPlan, {
        catalogApart,
      }) as Query<unknown>;
  const [keysOf, allOf, allApart] = [variant(0), variant(1), variant(1, true)];
  return {
    sql,
    keysOf,
    variantsOf: (root: PlanRoot<unknown>) => [keysOf(root), allOf(root), allApart(root)],
  };
}

function plannedStatements(catalog: Catalog, viewer: Viewer): Query<unknown>[] {
  const { sql, keysOf, variantsOf } = plannedVariants(catalog, viewer);
  const runFilters = combinations<TeamRunFilter>({
    teamName: [null, VALUE.teamName],
    states: [null, ['SUCCEEDED', 'FAILED']],
    startedAfter: [null, new Date('2026-09-01T00:00:00Z')],
    startedBefore: [null, new Date('2026-10-01T00:00:00Z')],
    owner: [null, VALUE.owner],
  });
  const orders = combinations<{ field: TeamRunOrderField; direction: 'ASC' | 'DESC' }>({
    field: ['START_DATE', 'END_DATE', 'TEAM_NAME', 'STATE'],
    direction: ['ASC', 'DESC'],
  });
  const callFilters = combinations<ToolCallFilter>({
    toolName: [null, VALUE.toolName],
    agentName: [null, VALUE.agentName],
    teamExecId: [null, VALUE.teamExecId],
  });
  const firstPage = { backward: false, limit: 5 };
  /** A page whose total no one reads (no totalCount selected): no count. */
  const uncounted = { ...firstPage, counted: false };
  const newest = { field: 'START_DATE', direction: 'DESC' } as const;
  const [teams] = lists.teams as [Fragment];
  const [runIds] = lists.runs as [Fragment];
  const [callIds] = lists.calls as [Fragment];
  return [
    ...variantsOf(sql.runsPage(viewer, {}, newest, firstPage)),
    ...runFilters.map((filter) => keysOf(sql.runsPage(viewer, filter, newest, firstPage))),
    ...variantsOf(sql.runsPage(viewer, {}, newest, uncounted)),
    ...orders.flatMap((order) => [
      keysOf(sql.runsPage(viewer, { conversationId: VALUE.conversationId }, order, firstPage)),
      ...keysetWindows(runOrderKeys(order)).map((page) =>
        keysOf(sql.runsPage(viewer, {}, order, page)),
      ),
    ]),
    ...variantsOf(sql.runsOfTeams({}, window, viewer, teams)),
    ...runFilters.map((filter) => keysOf(sql.runsOfTeams(filter, window, viewer, teams))),
    ...variantsOf(sql.callsPage(viewer, {}, firstPage)),
    ...variantsOf(sql.callsPage(viewer, {}, uncounted)),
    ...callFilters.map((filter) => keysOf(sql.callsPage(viewer, filter, firstPage))),
    ...keysetWindows(TOOL_CALL_ORDER_KEYS).map((page) => keysOf(sql.callsPage(viewer, {}, page))),
    ...variantsOf(sql.runsByIds(viewer, runIds)),
    ...variantsOf(sql.tasksOfRunIds(viewer, runIds)),
    ...variantsOf(sql.ofRuns(viewer, runIds)),
    ...variantsOf(sql.callsByIds(viewer, callIds)),
    ...variantsOf(sql.waitingOfTeams(viewer, teams)),
  ];
}

function taskDetailStatements(catalog: Catalog, viewer: Viewer): Query<unknown>[] {
  const sql = taskDetailsSql(catalog);
  return [
    ...forLists(sql.failuresByRuns(viewer), lists.runs),
    ...forLists(sql.promptsByConversations(viewer, window), [
      inList('conversation', [VALUE.conversationId, 'ANOTHER']),
    ]),
  ];
}

function activityStatements(catalog: Catalog, viewer: Viewer): Query<unknown>[] {
  const sql = teamActivitySql(catalog);
  const filters = combinations<ActivityFilter>({
    teamName: [null, VALUE.teamName],
    owner: [null, VALUE.owner],
  });
  const to = new Date('2026-10-01T00:00:00Z');
  return (['HOUR', 'DAY'] as const).flatMap((bucket) =>
    filters.map((filter) =>
      sql.activity(viewer, filter, activityWindow(bucket, new Date('2026-09-01T00:00:00Z'), to)),
    ),
  );
}

function execStatStatements(
  catalog: Catalog,
  orderFields: readonly ExecStatOrderField[],
): Query<unknown>[] {
  const sql = execStatSql(catalog);
  const orders = combinations<{ field: ExecStatOrderField; direction: 'ASC' | 'DESC' }>({
    field: orderFields,
    direction: ['ASC', 'DESC'],
  });
  return (['INSTANCE', 'CLUSTER'] as const).flatMap((scope) =>
    combinations<ExecStatFilter>({
      minTotalTimeMs: [null, 2000],
      conId: [null, 3],
      // V$ has no INST_ID; the schema rejects that filter outside CLUSTER.
      instId: scope === 'CLUSTER' ? [null, 2] : [null],
    }).flatMap((filter) => [
      sql.summary(scope, filter),
      ...orders.flatMap((order) => both(sql.page(scope, filter, order, window))),
    ]),
  );
}

/** Start-up's own statements (src/db/sql/session.ts, the ALL_ARGUMENTS look-up) and the self-check's. */
const sessionStatements = (catalog: Catalog): Query<unknown>[] => [
  sessionQuery,
  versionQuery,
  describeAgentProbe,
  executeAgentArguments,
  timeZoneQuery(catalog),
  createJobPrivilege,
];

export function registeredStatements(
  catalogs: readonly Catalog[],
  orderFields: readonly ExecStatOrderField[] = EXEC_STAT_ORDER_FIELDS,
): RegisteredStatement[] {
  const unique = new Map<string, RegisteredStatement>();
  for (const catalog of catalogs) {
    for (const entry of [
      ...VIEWERS.flatMap((viewer) => [
        ...agentStatements(catalog, viewer),
        ...teamStatements(catalog, viewer),
        ...historyStatements(catalog, viewer),
        ...plannedStatements(catalog, viewer),
        ...taskDetailStatements(catalog, viewer),
        ...activityStatements(catalog, viewer),
      ]),
      ...execStatStatements(catalog, orderFields),
      ...sessionStatements(catalog),
    ]) {
      if (!entry.noRows) unique.set(entry.statement.text, entry);
    }
  }
  return [...unique.values()];
}

export interface ProbeResult {
  readonly available: boolean;
  /** Why not (an error code and its PLS-/ORA- line), or what was found; never row data. */
  readonly detail: string | null;
}

/**
 * What the API assumes of the database beyond its views, each checked by
 * `npm run oracle:check` and reported as available or not (a missing capability degrades a
 * field; it does not fail the check). Add an entry for each procedure the API calls.
 */
export interface CapabilityProbe {
  /** The procedure or feature assumed, e.g. `DBMS_AI_AGENT.DESCRIBE_AGENT`. */
  readonly name: string;
  /** What depends on it, printed beside the result. */
  readonly needs: string;
  probe(driver: Driver, discovery: Discovery): Promise<ProbeResult>;
}

export const CAPABILITY_PROBES: CapabilityProbe[] = [
  {
    name: 'DBMS_AI_AGENT.DESCRIBE_AGENT',
    needs: 'Agent.description and Agent.callContract (EXECUTE ON DBMS_AI_AGENT, 26ai)',
    // Start-up already ran the wrapper over one row (discoverDatabase).
    probe: async (_driver, discovery) => ({
      available: discovery.agentDetails.callable,
      detail: discovery.agentDetails.reason,
    }),
  },
  {
    name: 'DBMS_AI_AGENT.EXECUTE_AGENT',
    needs:
      'executeAgent (EXECUTE ON DBMS_AI_AGENT, 26ai); the call is built from ALL_ARGUMENTS, see docs/oracle.md',
    // Start-up read the overloads (discoverDatabase); executing would run an agent.
    probe: async (_driver, { executeAgent }) => ({
      available: executeAgent.plain !== null,
      detail:
        executeAgent.missing ??
        `${executeAgent.signatures.join('; ')}; trace: ${
          executeAgent.traced
            ? `yes (${executeAgent.traced.tracesArgument})`
            : 'NO (no TRACES OUT overload)'
        }`,
    }),
  },
  {
    name: 'RUN_TEAM hand-off (DBMS_SCHEDULER)',
    needs:
      'respondToHuman and runTeam (CREATE JOB, EXECUTE ON DBMS_CLOUD_AI_AGENT and DBMS_CLOUD_AI); see docs/oracle.md',
    // The block for a run that is not in the history: compiled whole, it stops at the state
    // check, before any job exists. RUN_TEAM is text in the job's action, so a block that
    // references it without running it is compiled too, and CREATE JOB read from SESSION_PRIVS.
    probe: async (driver, discovery) => {
      const [mayCreateJob] = await fetchRows(driver, createJobPrivilege);
      if (!mayCreateJob) {
        return { available: false, detail: 'no CREATE JOB privilege in SESSION_PRIVS' };
      }
      await driver.runBlock(runTeamCompiles, {});
      const sql = runTeamSql(discovery.catalog);
      const outcome = sql.decode(
        await driver.runBlock(
          sql.block,
          sql.binds({
            jobName: runTeamJobName('ANSWER', 'AGENTGRAPH_CHECK', 'NO_SUCH_CALL'),
            execId: 'AGENTGRAPH_CHECK_NO_SUCH_RUN',
            teamOwner: discovery.catalog.sessionUser,
            teamName: 'AGENTGRAPH_CHECK_NO_SUCH_TEAM',
            prompt: 'check',
            conversationId: null,
          }),
        ),
      );
      return outcome.kind === 'not_waiting'
        ? { available: true, detail: null }
        : { available: false, detail: `unexpected outcome ${outcome.kind}` };
    },
  },
];

/** How many first rows of each page the second pass takes its keys from. */
export const SAMPLE_SIZE = 5;

const NEWEST_FIRST = { field: 'START_DATE', direction: 'DESC' } as const;

/**
 * The first pages the second pass reads its keys from, as an administrator sees them (every
 * owner in `dba` scope): teams.page, history.runsPage (newest first) and agents.page.
 */
export function sampleQueries(catalog: Catalog) {
  const first = { offset: 0, limit: SAMPLE_SIZE };
  return {
    teams: teamSql(catalog).page(ANONYMOUS_ADMIN, { nameContains: null, owner: null }, first).page,
    runs: plannedVariants(catalog, ANONYMOUS_ADMIN).keysOf(
      historyPlanSql(catalog).runsPage(ANONYMOUS_ADMIN, {}, NEWEST_FIRST, {
        backward: false,
        limit: SAMPLE_SIZE,
      }),
    ) as Query<PlanResult<Positioned<TeamRun>>>,
    agents: agentSql(catalog).page(ANONYMOUS_ADMIN, first).page,
  };
}

/** Real keys, from the first rows of sampleQueries' pages; never printed, only counted. */
export interface SampleKeys {
  readonly teamNames: readonly string[];
  readonly runs: readonly Positioned<{ readonly execId: string }>[];
  readonly agentNames: readonly string[];
}

/** What the second pass says of a statement's rows beyond their count; never a row value. */
export interface Inspection {
  /** A fault: the check fails. */
  readonly flag?: string;
  /** Worth knowing, not a fault. */
  readonly note?: string;
}

/** A statement of the second pass, with what it inspects in its rows (decoded and as sent). */
export interface KeyedStatement {
  readonly query: Query<unknown>;
  readonly inspect: (rows: readonly unknown[], sent: readonly Row[]) => Inspection;
}

const keyed = <T>(
  query: Query<T>,
  inspect: (rows: readonly T[], sent: readonly Row[]) => Inspection = () => ({}),
): KeyedStatement => ({
  query: query as Query<unknown>,
  inspect: (rows, sent) => inspect(rows as readonly T[], sent),
});

/**
 * The windows of runs of teams, with the lists their plan read below them (set on the rows,
 * src/db/sql/history-plan.ts), checked as one (listInspection). A row the plan attached to
 * several parents (one agent of several tasks) is one row of its list.
 */
const inspectTree = (results: readonly PlanResult<WindowedRun>[]) => {
  const runs = results.flatMap((result) => result.rows);
  const below = (rows: readonly object[], key: string) => [
    ...new Set(rows.flatMap((row) => (plannedChild(row, key) ?? []) as object[])),
  ];
  const tasks = below(
    runs.map((row) => row.run),
    'tasks',
  ) as TaskRun[];
  return listInspection({
    runs,
    tasks,
    toolCalls: below(
      runs.map((row) => row.run),
      'toolCalls',
    ) as ToolCall[],
    agents: [...new Set(tasks.flatMap((task) => plannedChild(task, 'agent') ?? []))] as Agent[],
  });
};

/**
 * The second pass of `npm run oracle:check`: the batched (IN-list), keyset, JSON-building
 * and DESCRIBE_AGENT statements over keys that match rows, built the way the loaders build
 * them. Queries only; a key list that came back empty leaves its statements out.
 */
export function keyedStatements(
  catalog: Catalog,
  keys: SampleKeys,
  describable: boolean,
): KeyedStatement[] {
  const viewer = ANONYMOUS_ADMIN;
  const team = teamSql(catalog);
  const history = teamHistorySql(catalog);
  const planned = plannedVariants(catalog, viewer);
  const statements: KeyedStatement[] = [];
  if (keys.teamNames.length > 0) {
    const teams = inList('team', keys.teamNames);
    statements.push(
      keyed(team.byNames(viewer)(teams)),
      keyed(team.toolsByTeams(viewer)(teams)),
      keyed(team.statsByTeams(viewer)(teams)),
      ...planned
        .variantsOf(planned.sql.runsOfTeams({}, window, viewer, teams))
        .map((query) => keyed(query as Query<PlanResult<WindowedRun>>, inspectTree)),
      keyed(planned.keysOf(planned.sql.waitingOfTeams(viewer, teams))),
    );
  }
  const first = keys.runs[0];
  const last = keys.runs.at(-1);
  if (first && last) {
    const runIds = new Set(keys.runs.map((run) => run.node.execId));
    const runs = inList('exec', [...runIds]);
    statements.push(
      keyed(history.runsByIds(viewer)(runs)),
      keyed(history.tasksByRuns(viewer)(runs), (tasks) => listInspection({ tasks }, runIds)),
      keyed(history.toolCallsByRuns(viewer)(runs), (toolCalls) =>
        listInspection({ toolCalls }, runIds),
      ),
      keyed(taskDetailsSql(catalog).failuresByRuns(viewer)(runs)),
      // The keyset predicates with a real row's values: after the newest, before the oldest.
      ...[
        { after: first.position, backward: false, limit: SAMPLE_SIZE },
        { before: last.position, backward: true, limit: SAMPLE_SIZE },
      ].flatMap((page) =>
        planned
          .variantsOf(planned.sql.runsPage(viewer, {}, NEWEST_FIRST, page))
          .map((q) => keyed(q)),
      ),
      ...planned
        .variantsOf(
          planned.sql.callsPage(
            viewer,
            { teamExecId: first.node.execId },
            { backward: false, limit: SAMPLE_SIZE },
          ),
        )
        .map((query) => keyed(query)),
    );
  }
  if (keys.agentNames.length > 0) {
    statements.push(
      keyed(
        agentSql(catalog).byNames(viewer, true)(inList('name', keys.agentNames)),
        (agents, sent) => {
          // DESCRIBE_AGENT addresses the session user's agents only (src/db/oracle/driver.ts).
          if (!describable) return {};
          const own = agents.flatMap((agent, i) =>
            agent.owner === catalog.sessionUser ? [{ agent, details: sent[i]?.agentDetails }] : [],
          );
          const undescribed = own.filter(
            ({ details }) => details === null || details === undefined,
          );
          // An Agent Spec may leave its description out: a JSON without one is no fault.
          const bare = own.filter(({ agent }) => agent.description === null).length;
          return {
            flag:
              undescribed.length > 0
                ? `${undescribed.length} own agents with a null description: DESCRIBE_AGENT answered NULL`
                : undefined,
            note: bare > 0 ? `${bare} own agents without a description in their JSON` : undefined,
          };
        },
      ),
    );
  }
  return statements.filter((statement) => !statement.query.noRows);
}

/** How many values occur more than once in `keys`. */
function repeated(keys: readonly string[]): number {
  const seen = new Set<string>();
  let twice = 0;
  for (const key of keys) {
    if (seen.has(key)) twice++;
    else seen.add(key);
  }
  return twice;
}

/**
 * A JSON list's rows checked beyond their count (the decoder has already refused a column
 * whose length is not the row count, MisalignedList): keys that must be unique are, every
 * row's run is one asked for, and two columns read from one value agree. A list whose columns
 * were put in different orders fails one of them; a task logged twice under one TASK_ORDER
 * (seed 003 documents no key) is a note. Names and counts only, never a value.
 */
export function listInspection(
  lists: {
    readonly runs?: readonly WindowedRun[];
    readonly tasks?: readonly TaskRun[];
    readonly toolCalls?: readonly ToolCall[];
    readonly agents?: readonly Agent[];
  },
  runIds?: ReadonlySet<string>,
): Inspection {
  const flags: string[] = [];
  const notes: string[] = [];
  const { runs = [], tasks = [], toolCalls = [], agents = [] } = lists;
  const ofRuns = runIds ?? new Set(runs.map((row) => row.run.execId));
  const count = (n: number, what: string) => n > 0 && flags.push(`${n} ${what}`);
  count(repeated(runs.map((row) => row.run.execId)), 'runs listed twice (TEAM_EXEC_ID)');
  count(
    repeated(runs.map((row) => `${row.run.owner}.${row.run.teamName}#${row.rowNumber}`)),
    'runs sharing a team and a row number',
  );
  count(
    repeated(toolCalls.map((call) => call.invocationId)),
    'tool calls listed twice (INVOCATION_ID)',
  );
  count(repeated(agents.map((agent) => `${agent.owner}.${agent.name}`)), 'agents listed twice');
  count(
    tasks.filter((task) => !ofRuns.has(task.teamExecId)).length,
    'tasks of a run not asked for',
  );
  count(
    toolCalls.filter((call) => !ofRuns.has(call.teamExecId)).length,
    'tool calls of a run not asked for',
  );
  count(
    tasks.filter((task) => {
      const params = task.conversationParams as { conversation_id?: unknown } | null;
      return task.conversationId !== null && params?.conversation_id !== task.conversationId;
    }).length,
    'tasks whose CONVERSATION_ID is not their conversation parameters’ (columns misaligned)',
  );
  const tied = repeated(tasks.map((task) => `${task.teamExecId}#${task.taskOrder}`));
  if (tied > 0) notes.push(`${tied} tasks logged again under a TASK_ORDER, listed by start`);
  return {
    flag: flags.length > 0 ? flags.join('; ') : undefined,
    note: notes.length > 0 ? notes.join('; ') : undefined,
  };
}
