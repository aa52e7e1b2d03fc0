import type { Catalog } from '../db/catalog.js';
import type { Driver } from '../db/driver.js';
import type { Fragment } from '../db/sql/fragment.js';
import { historyPlanSql, type PlanResult, type PlanRoot } from '../db/sql/history-plan.js';
import { fetchForKeys } from '../db/sql/in-lists.js';
import type { Page } from '../db/sql/pages.js';
import { fetchRows, type Query } from '../db/sql/query.js';
import { taskDetailsSql } from '../db/sql/task-details.js';
import { teamHistorySql } from '../db/sql/team-history.js';
import type { KeysetWindow, Positioned } from '../model/keyset.js';
import {
  type CatalogEdge,
  type ListPlan,
  PLANNED,
  type Planned,
  readsBelow,
  setPlannedChild,
} from '../model/plan.js';
import {
  type LlmPrompt,
  namesOfTeamKeys,
  type PolledRun,
  perTeamKey,
  type TaskFailure,
  type TaskRun,
  type TeamRun,
  type TeamRunFilter,
  type TeamRunOrder,
  type ToolCall,
  type ToolCallFilter,
  teamKey,
} from '../model/team.js';
import type { Viewer } from '../model/viewer.js';
import type { AgentRepository } from './agents.js';
import type { TeamRepository } from './teams.js';
import { requireView } from './views.js';

/**
 * Where the back-edges of a plan to the catalog (a run's team, a task's agent) are read when
 * the catalog is cached across requests (src/repositories/catalog-cache.ts): the loaders'
 * own reads, so a planned back-edge answers what its field's loader would.
 */
export interface CatalogRows {
  readonly teams: TeamRepository;
  readonly agents: AgentRepository;
}

/** The keys the pages of runs and of tool calls are ordered by: what their cursors hold. */
export { runOrderKeys, TOOL_CALL_ORDER_KEYS } from '../db/sql/team-history.js';

/** Runs, tasks and tool calls from the history views; every batch is one IN-list statement. */
export class TeamHistoryRepository {
  private readonly sql;
  private readonly details;
  private readonly plans;
  private readonly planOptions;

  constructor(
    private readonly driver: Driver,
    private readonly catalog: Catalog,
    private readonly viewer: Viewer,
    /**
     * With it, a plan's statement leaves its catalog rows out and they are read here, from the
     * cache; without it (nothing cached), they are lists of the statement.
     */
    private readonly catalogRows?: CatalogRows,
  ) {
    this.sql = teamHistorySql(catalog);
    this.details = taskDetailsSql(catalog);
    this.plans = historyPlanSql(catalog);
    this.planOptions = { catalogApart: catalogRows !== undefined };
  }

  /**
   * The roots of a plan (src/model/plan.ts): each one statement per batch of keys, reading the
   * root's rows with every list its plan names, set on the rows (PLANNED) for the resolvers.
   */
  private async plannedForKeys<R>(
    keys: readonly string[],
    prefix: string,
    root: (list: Fragment) => PlanRoot<R>,
    plan: ListPlan,
  ): Promise<R[]> {
    const results = await fetchForKeys(this.driver, keys, prefix, (list) =>
      this.plans.planned(this.viewer, root(list), plan, this.planOptions),
    );
    await this.serveCatalog(results);
    return results.flatMap((result) => result.rows);
  }

  private async plannedPage<T>(root: PlanRoot<Positioned<T>>, plan: ListPlan) {
    const results = await fetchRows(
      this.driver,
      this.plans.planned(this.viewer, root, plan, this.planOptions),
    );
    await this.serveCatalog(results);
    const [result] = results;
    return { items: result?.rows ?? [], totalCount: result?.total ?? 0 };
  }

  /**
   * Sets the catalog rows the statements left out on their parents: the teams of runs by team
   * key and the agents of tasks by name, each one batch through the cache, as the fields'
   * loaders read them (a name no visible row has is null).
   */
  private async serveCatalog(results: readonly PlanResult<unknown>[]): Promise<void> {
    const edges = results.flatMap((result) => result.catalogEdges);
    const rows = this.catalogRows;
    if (edges.length === 0 || !rows) return;
    await Promise.all([
      served(
        edges.filter((edge) => edge.relation.target === 'Team'),
        (run: TeamRun) => teamKey(run.owner, run.teamName),
        (keys) => rows.teams.byKeys(keys),
      ),
      served(
        edges.filter((edge) => edge.relation.target === 'Agent'),
        (task: TaskRun) => task.agentName,
        (names) => rows.agents.byNames(names, false),
      ),
    ]);
  }

  /**
   * Team.runs: each team's window of runs with their plan, by team key (src/model/team.ts):
   * read by the teams' names, windowed per owner and name.
   */
  async plannedRunPages(
    teamKeys: readonly string[],
    filter: TeamRunFilter,
    offset: number,
    limit: number,
    plan: ListPlan,
  ): Promise<Page<TeamRun>[]> {
    requireView(this.catalog.teamHistory);
    const windows = await this.plannedForKeys(
      namesOfTeamKeys(teamKeys),
      'team',
      (teams) => this.plans.runsOfTeams(filter, { offset, limit }, this.viewer, teams),
      plan,
    );
    return perTeamKey(teamKeys, windows, ({ run }) => ({
      owner: run.owner,
      name: run.teamName,
    })).map((rows) => ({
      items: rows.filter((row) => row.rowNumber > offset).map((row) => row.run),
      totalCount: rows[0]?.totalCount ?? 0,
    }));
  }

  /** Query.teamRuns: one keyset page of runs with their plan, and the total, in one statement. */
  async plannedRunsPage(
    filter: TeamRunFilter,
    order: TeamRunOrder,
    window: KeysetWindow,
    plan: ListPlan,
  ): Promise<Page<Positioned<TeamRun>>> {
    requireView(this.catalog.teamHistory);
    return this.plannedPage(this.plans.runsPage(this.viewer, filter, order, window), plan);
  }

  /** Query.toolCalls: one keyset page of calls with their plan, and the total. */
  async plannedCallsPage(
    filter: ToolCallFilter,
    window: KeysetWindow,
    plan: ListPlan,
  ): Promise<Page<Positioned<ToolCall>>> {
    requireView(this.catalog.toolHistory);
    return this.plannedPage(this.plans.callsPage(this.viewer, filter, window), plan);
  }

  /** Runs by TEAM_EXEC_ID with their plan, null where none is visible. */
  async plannedRunsByIds(ids: readonly string[], plan: ListPlan): Promise<(TeamRun | null)[]> {
    requireView(this.catalog.teamHistory);
    const runs = await this.plannedForKeys(
      ids,
      'exec',
      (list) => this.plans.runsByIds(this.viewer, list),
      plan,
    );
    const found = new Map(runs.map((run) => [run.execId, run]));
    return ids.map((id) => found.get(id) ?? null);
  }

  /** The tasks of each run with their plan (TaskRun nodes), in TASK_ORDER. */
  async plannedTasksOfRuns(ids: readonly string[], plan: ListPlan): Promise<TaskRun[][]> {
    requireView(this.catalog.taskHistory);
    const tasks = (await this.plannedForKeys(
      ids,
      'exec',
      (list) => this.plans.tasksOfRunIds(this.viewer, list),
      plan,
    )) as TaskRun[];
    const groups = groupedBy(tasks, (task) => task.teamExecId);
    return ids.map((id) => groups.get(id) ?? []);
  }

  /** Tool calls by INVOCATION_ID with their plan, null where none is visible. */
  async plannedCallsByIds(ids: readonly string[], plan: ListPlan): Promise<(ToolCall | null)[]> {
    requireView(this.catalog.toolHistory);
    const calls = await this.plannedForKeys(
      ids,
      'invocation',
      (list) => this.plans.callsByIds(this.viewer, list),
      plan,
    );
    const found = new Map(calls.map((call) => [call.invocationId, call]));
    return ids.map((id) => found.get(id) ?? null);
  }

  /** Team.waitingForHuman: each team's waiting runs with their plan, oldest first, by team key. */
  async plannedWaiting(teamKeys: readonly string[], plan: ListPlan): Promise<TeamRun[][]> {
    requireView(this.catalog.teamHistory);
    const runs = await this.plannedForKeys(
      namesOfTeamKeys(teamKeys),
      'team',
      (teams) => this.plans.waitingOfTeams(this.viewer, teams),
      plan,
    );
    return perTeamKey(teamKeys, runs, (run) => ({ owner: run.owner, name: run.teamName }));
  }

  /**
   * Runs the caller holds (a subscription event's): copies of them carrying what their plan
   * reads below them, in one statement; the runs themselves when the plan reads nothing below.
   */
  async plannedOfRuns<T extends TeamRun>(runs: readonly T[], plan: ListPlan): Promise<T[]> {
    if (runs.length === 0 || !readsBelow(plan)) return [...runs];
    requireView(this.catalog.teamHistory);
    const copies = runs.map((run) => ({ ...run }) as Planned<T>);
    for (const batch of chunkOf(copies)) {
      const ids = batch.map((run) => run.execId);
      const results = await fetchForKeys(this.driver, ids, 'exec', (list) =>
        this.plans.planned(this.viewer, this.plans.ofRuns(this.viewer, list), plan, {
          ...this.planOptions,
          given: batch,
        }),
      );
      await this.serveCatalog(results);
    }
    return copies;
  }

  /** False when the scheduler's job-run view is missing (failures then read as null). */
  get failuresReadable(): boolean {
    return this.catalog.jobRunDetails.columns !== null && this.catalog.taskHistory.columns !== null;
  }

  /** False when the conversation-prompts view is missing (prompts then read as null). */
  get promptsReadable(): boolean {
    return this.catalog.conversationPrompts.columns !== null;
  }

  /** The failed job runs of each run's failed tasks, latest first per task. */
  async failuresOf(execIds: readonly string[]): Promise<TaskFailure[][]> {
    if (!this.failuresReadable) return execIds.map(() => []);
    return this.groupBy(execIds, 'exec', this.details.failuresByRuns, (f) => f.teamExecId);
  }

  /** A page of each conversation's prompts, in CREATED order (`offset`/`limit` per conversation). */
  async promptPagesOf(
    conversationIds: readonly string[],
    offset: number,
    limit: number,
  ): Promise<Page<LlmPrompt>[]> {
    const windowed = this.details.promptsByConversations(this.viewer, { offset, limit });
    const rows = await fetchForKeys(this.driver, conversationIds, 'conversation', windowed);
    return pagesPerKey(conversationIds, rows, offset, (row) => [
      row.prompt.conversationId,
      row.prompt,
    ]);
  }

  async runsByIds(ids: readonly string[]): Promise<(TeamRun | null)[]> {
    requireView(this.catalog.teamHistory);
    const found = new Map<string, TeamRun>();
    for (const run of await this.forKeys(ids, 'exec', this.sql.runsByIds)) {
      found.set(run.execId, run);
    }
    return ids.map((id) => found.get(id) ?? null);
  }

  /** Fails with FORBIDDEN, naming the grant, when the team-history view cannot be read. */
  requireRuns(): void {
    requireView(this.catalog.teamHistory);
  }

  /** Runs that have not ended, plus those that ended at or after `since`: one statement. */
  async livePoll(since: Date): Promise<PolledRun[]> {
    this.requireRuns();
    return fetchRows(this.driver, this.sql.livePoll(since));
  }

  /** Tasks of each run, in TASK_ORDER, every column. */
  async tasksOf(execIds: readonly string[]): Promise<TaskRun[][]> {
    requireView(this.catalog.taskHistory);
    return this.groupBy(execIds, 'exec', this.sql.tasksByRuns, (task) => task.teamExecId);
  }

  /** Tool calls of each run, by task order then start, every column. */
  async toolCallsOf(execIds: readonly string[]): Promise<ToolCall[][]> {
    requireView(this.catalog.toolHistory);
    return this.groupBy(execIds, 'exec', this.sql.toolCallsByRuns, (call) => call.teamExecId);
  }

  async toolCallsByIds(ids: readonly string[]): Promise<(ToolCall | null)[]> {
    requireView(this.catalog.toolHistory);
    const found = new Map<string, ToolCall>();
    for (const call of await this.forKeys(ids, 'invocation', this.sql.toolCallsByIds)) {
      found.set(call.invocationId, call);
    }
    return ids.map((id) => found.get(id) ?? null);
  }

  private forKeys<T>(
    keys: readonly string[],
    prefix: string,
    build: (viewer: Viewer) => (list: Fragment) => Query<T>,
  ): Promise<T[]> {
    return fetchForKeys(this.driver, keys, prefix, build(this.viewer));
  }

  private async groupBy<T>(
    keys: readonly string[],
    prefix: string,
    build: (viewer: Viewer) => (list: Fragment) => Query<T>,
    keyOf: (item: T) => string,
  ): Promise<T[][]> {
    const groups = new Map<string, T[]>();
    for (const item of await this.forKeys(keys, prefix, build)) {
      const group = groups.get(keyOf(item)) ?? [];
      group.push(item);
      groups.set(keyOf(item), group);
    }
    return keys.map((key) => groups.get(key) ?? []);
  }
}

/** Each parent of `edges` given its row read by key (null where none), one read for all. */
async function served<P, V>(
  edges: readonly CatalogEdge[],
  keyOf: (parent: P) => string,
  read: (keys: readonly string[]) => Promise<(V | null)[]>,
): Promise<void> {
  if (edges.length === 0) return;
  const keys = [...new Set(edges.flatMap((edge) => (edge.parents as P[]).map(keyOf)))];
  const values = await read(keys);
  const byKey = new Map(keys.map((key, i) => [key, values[i] ?? null]));
  for (const { key, parents } of edges) {
    for (const parent of parents as P[]) {
      setPlannedChild(parent as object, key, byKey.get(keyOf(parent)) ?? null);
    }
  }
}

function groupedBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(keyOf(item));
    if (group) group.push(item);
    else groups.set(keyOf(item), [item]);
  }
  return groups;
}

/** Runs in batches of at most one IN list (fetchForKeys sends one statement per 1,000 keys). */
function chunkOf<T>(items: readonly T[]): T[][] {
  const batches: T[][] = [];
  for (let i = 0; i < items.length; i += 1000) batches.push(items.slice(i, i + 1000));
  return batches;
}

/** The planned children `row` carries (set by a planned statement), for a wrapper of it. */
export function plannedOf(row: object): Planned<object>[typeof PLANNED] {
  return (row as Planned<object>)[PLANNED];
}

/**
 * One page per key, in the keys' order, from a statement that numbers each key's rows
 * (ROW_NUMBER) and carries the key's total on each: a key's first row also comes back to carry
 * the total when the window starts past it, so rows up to `offset` are not items.
 */
function pagesPerKey<R extends { readonly rowNumber: number; readonly totalCount: number }, T>(
  keys: readonly string[],
  rows: readonly R[],
  offset: number,
  entry: (row: R) => readonly [key: string, item: T],
): Page<T>[] {
  const pages = new Map<string, { items: T[]; totalCount: number }>();
  for (const row of rows) {
    const [key, item] = entry(row);
    const page = pages.get(key) ?? { items: [], totalCount: row.totalCount };
    if (row.rowNumber > offset) page.items.push(item);
    pages.set(key, page);
  }
  return keys.map((key) => pages.get(key) ?? { items: [], totalCount: 0 });
}
