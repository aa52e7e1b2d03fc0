import type { Catalog } from '../../src/db/catalog.js';
import { agentSql } from '../../src/db/sql/agents.js';
import { execStatSql } from '../../src/db/sql/exec-stats.js';
import { type Fragment, inList, type PagedQuery, type Query } from '../../src/db/sql/statement.js';
import { taskDetailsSql } from '../../src/db/sql/task-details.js';
import { teamHistorySql } from '../../src/db/sql/team-history.js';
import { teamSql } from '../../src/db/sql/teams.js';
import type { ExecStatFilter, ExecStatOrderField } from '../../src/model/exec-stat.js';
import type { TeamRunFilter, TeamRunOrderField, ToolCallFilter } from '../../src/model/team.js';
import { ANONYMOUS_ADMIN, type Viewer } from '../../src/model/viewer.js';

/**
 * Every statement the repositories can issue: the query values of src/db/sql, built the way
 * the repositories build them (each carries its own binds), for an administrator and a
 * non-admin viewer, filters present and absent, every order field and direction, over both
 * view scopes (through the catalogs). Queries that cannot match (a USER_ view and another
 * owner) are never sent and are left out. The modules of src/db/sql that this registry
 * enumerates are listed in ENUMERATED_MODULES; a test fails for any other, so a new module
 * cannot go untested.
 */
export const ENUMERATED_MODULES = [
  'agents.ts',
  'exec-stats.ts',
  // Not a query: its block creates a scheduler job, so it is never run against a user's
  // database; test/hitl/run-team-sql.test.ts checks its binds, docs/oracle.md its probe.
  'run-team.ts',
  'statement.ts',
  'task-details.ts',
  'teams.ts',
  'team-history.ts',
];

export type RegisteredStatement = Query<unknown>;

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
  return [...both(sql.page(viewer, window)), ...forLists(sql.byNames(viewer), lists.agents)];
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
  return [
    ...runFilters.flatMap((filter) => [
      ...orders.flatMap((order) => both(sql.runsPage(viewer, filter, order, window))),
      ...forLists(sql.runsByTeams(viewer, filter, window), lists.teams),
    ]),
    ...orders.flatMap((order) =>
      both(sql.runsPage(viewer, { conversationId: VALUE.conversationId }, order, window)),
    ),
    ...forLists(sql.runsByIds(viewer), lists.runs),
    ...forLists(sql.waitingByTeams(viewer), lists.teams),
    sql.livePoll(new Date('2026-09-01T00:00:00Z')),
    ...forLists(sql.tasksByRuns(viewer), lists.runs),
    ...forLists(sql.toolCallsByRuns(viewer), lists.runs),
    ...forLists(sql.toolCallsByIds(viewer), lists.calls),
    ...callFilters.flatMap((filter) => both(sql.toolCallsPage(viewer, filter, window))),
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

export function registeredStatements(
  catalogs: readonly Catalog[],
  orderFields: readonly ExecStatOrderField[],
): RegisteredStatement[] {
  const unique = new Map<string, RegisteredStatement>();
  for (const catalog of catalogs) {
    for (const entry of [
      ...VIEWERS.flatMap((viewer) => [
        ...agentStatements(catalog, viewer),
        ...teamStatements(catalog, viewer),
        ...historyStatements(catalog, viewer),
        ...taskDetailStatements(catalog, viewer),
      ]),
      ...execStatStatements(catalog, orderFields),
    ]) {
      if (!entry.noRows) unique.set(entry.statement.text, entry);
    }
  }
  return [...unique.values()];
}

/** The `:name` placeholders of a statement (our SQL quotes no text containing colons). */
export function placeholders(text: string): Set<string> {
  return new Set([...text.matchAll(/(?<!:):([A-Za-z_]\w*)/g)].map((m) => m[1] as string));
}
