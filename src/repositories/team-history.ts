import { type Catalog, ownerColumn } from '../db/catalog.js';
import type { Binds, Driver, Row, Statement } from '../db/driver.js';
import { dateOrNull, jsonOrNull, num, numOrNull, str, strOrNull } from '../db/rows.js';
import { chunk, inList } from '../db/sql/statement.js';
import { type RunFilterShape, teamHistorySql } from '../db/sql/team-history.js';
import type {
  PolledRun,
  TaskRun,
  TeamRun,
  TeamRunFilter,
  TeamRunOrder,
  TeamRunState,
  ToolCall,
  ToolCallFilter,
} from '../model/team.js';
import type { Viewer } from '../model/viewer.js';
import type { Page } from './agents.js';
import { rowsForKeys } from './batch.js';
import { type OwnerAccess, ownerAccess, requireView } from './views.js';

/** Runs, tasks and tool calls from the history views; every batch is one IN-list statement. */
export class TeamHistoryRepository {
  private readonly sql;

  /**
   * What the viewer may read of the runs. Tasks and tool calls follow their run (one rule,
   * in db/sql/team-history.ts), not their own TASK_OWNER/TOOL_OWNER.
   */
  private readonly runs: OwnerAccess;

  constructor(
    private readonly driver: Driver,
    private readonly catalog: Catalog,
    viewer: Viewer,
  ) {
    this.sql = teamHistorySql(catalog);
    this.runs = ownerAccess(viewer, catalog, catalog.teamHistory, ['TEAM_OWNER']);
  }

  async page(
    filter: TeamRunFilter,
    order: TeamRunOrder,
    offset: number,
    limit: number,
  ): Promise<Page<TeamRun>> {
    requireView(this.catalog.teamHistory);
    const prepared = this.prepare(filter);
    if (!prepared) return { items: [], totalCount: 0 };
    const rows = await this.driver.query(
      this.sql.runsPage(prepared.shape, order.field, order.direction),
      {
        ...prepared.binds,
        page_offset: offset,
        page_limit: limit,
      },
    );
    const totalCount = rows[0]
      ? num(rows[0].totalCount)
      : num(
          (await this.driver.query(this.sql.runsCount(prepared.shape), prepared.binds))[0]
            ?.totalCount,
        );
    return { items: rows.map((row) => this.toRun(row)), totalCount };
  }

  /** The newest runs of each team (`offset`/`limit` apply per team), in the teams' order. */
  async pagesByTeams(
    teamNames: readonly string[],
    filter: TeamRunFilter,
    offset: number,
    limit: number,
  ): Promise<Page<TeamRun>[]> {
    requireView(this.catalog.teamHistory);
    const prepared = this.prepare(filter);
    const pages = new Map<string, Page<TeamRun> & { items: TeamRun[] }>();
    if (prepared) {
      for (const batch of chunk([...new Set(teamNames)])) {
        const list = inList('team', batch);
        const rows = await this.driver.query(this.sql.runsByTeams(list.text, prepared.shape), {
          ...list.binds,
          ...prepared.binds,
          page_offset: offset,
          page_end: offset + limit,
        });
        for (const row of rows) {
          const run = this.toRun(row);
          const page = pages.get(run.teamName) ?? { items: [], totalCount: num(row.totalCount) };
          // Each team's first run also comes back to carry the total; it may lie before the window.
          if (num(row.rn) > offset) page.items.push(run);
          pages.set(run.teamName, page);
        }
      }
    }
    return teamNames.map((name) => pages.get(name) ?? { items: [], totalCount: 0 });
  }

  async runsByIds(ids: readonly string[]): Promise<(TeamRun | null)[]> {
    requireView(this.catalog.teamHistory);
    const found = new Map<string, TeamRun>();
    for (const run of await this.batched(ids, 'exec', this.runs, this.sql.runsByIds, (row) =>
      this.toRun(row),
    )) {
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
    const rows = await this.driver.query(this.sql.livePoll(), { since });
    return rows.map((row) => ({ ...this.toRun(row), waitingSince: dateOrNull(row.waitingSince) }));
  }

  async waitingForHuman(teamNames: readonly string[]): Promise<TeamRun[][]> {
    requireView(this.catalog.teamHistory);
    return this.groupBy(
      teamNames,
      this.runs,
      this.sql.waitingByTeams,
      'team',
      (row) => this.toRun(row),
      (run) => run.teamName,
    );
  }

  /** Tasks of each run, in TASK_ORDER. */
  async tasksOf(execIds: readonly string[]): Promise<TaskRun[][]> {
    requireView(this.catalog.taskHistory);
    return this.groupBy(
      execIds,
      this.runs,
      this.sql.tasksByRuns,
      'exec',
      (row) => this.toTask(row),
      (task) => task.teamExecId,
    );
  }

  /** Tool calls of each run, by task order then start. */
  async toolCallsOf(execIds: readonly string[]): Promise<ToolCall[][]> {
    requireView(this.catalog.toolHistory);
    return this.groupBy(
      execIds,
      this.runs,
      this.sql.toolCallsByRuns,
      'exec',
      (row) => this.toToolCall(row),
      (call) => call.teamExecId,
    );
  }

  async toolCallsByIds(ids: readonly string[]): Promise<(ToolCall | null)[]> {
    requireView(this.catalog.toolHistory);
    const found = new Map<string, ToolCall>();
    const calls = await this.batched(ids, 'invocation', this.runs, this.sql.toolCallsByIds, (row) =>
      this.toToolCall(row),
    );
    for (const call of calls) found.set(call.invocationId, call);
    return ids.map((id) => found.get(id) ?? null);
  }

  async toolCallPage(
    filter: ToolCallFilter,
    offset: number,
    limit: number,
  ): Promise<Page<ToolCall>> {
    requireView(this.catalog.toolHistory);
    const binds: Record<string, string> = {};
    if (filter.toolName) binds.tool_name = filter.toolName;
    if (filter.agentName) binds.agent_name = filter.agentName;
    if (filter.teamExecId) binds.team_exec_id = filter.teamExecId;
    if (this.runs.kind === 'nothing') return { items: [], totalCount: 0 };
    if (this.runs.kind === 'owner') Object.assign(binds, this.runs.binds);
    const shape = {
      toolName: !!filter.toolName,
      agentName: !!filter.agentName,
      teamExecId: !!filter.teamExecId,
      restricted: this.runs.kind === 'owner',
    };
    const rows = await this.driver.query(this.sql.toolCallsPage(shape), {
      ...binds,
      page_offset: offset,
      page_limit: limit,
    });
    const totalCount = rows[0]
      ? num(rows[0].totalCount)
      : num((await this.driver.query(this.sql.toolCallsCount(shape), binds))[0]?.totalCount);
    return { items: rows.map((row) => this.toToolCall(row)), totalCount };
  }

  private async groupBy<T>(
    keys: readonly string[],
    access: OwnerAccess,
    build: (list: string, restricted: boolean) => Statement,
    prefix: string,
    map: (row: Row) => T,
    keyOf: (item: T) => string,
  ): Promise<T[][]> {
    const groups = new Map<string, T[]>();
    for (const item of await this.batched(keys, prefix, access, build, map)) {
      const group = groups.get(keyOf(item)) ?? [];
      group.push(item);
      groups.set(keyOf(item), group);
    }
    return keys.map((key) => groups.get(key) ?? []);
  }

  private async batched<T>(
    keys: readonly string[],
    prefix: string,
    access: OwnerAccess,
    build: (list: string, restricted: boolean) => Statement,
    map: (row: Row) => T,
  ): Promise<T[]> {
    const rows = await rowsForKeys(keys, prefix, access, build, (statement, binds) =>
      this.driver.query(statement, binds),
    );
    return rows.map(map);
  }

  /** Shape and binds of a run filter; null when it cannot match (another owner in USER_ scope). */
  private prepare(filter: TeamRunFilter): { shape: RunFilterShape; binds: Binds } | null {
    if (this.runs.kind === 'nothing') return null;
    const binds: Record<string, string | Date> =
      this.runs.kind === 'owner' ? { ...this.runs.binds } : {};
    let owner = false;
    if (filter.owner) {
      if (ownerColumn(this.catalog.teamHistory, ['TEAM_OWNER'])) {
        binds.owner = filter.owner;
        owner = true;
      } else if (filter.owner !== this.catalog.sessionUser) {
        return null;
      }
    }
    if (filter.teamName) binds.team_name = filter.teamName;
    const states = [...new Set(filter.states ?? [])];
    states.forEach((state, i) => {
      binds[`state${i}`] = state;
    });
    if (filter.startedAfter) binds.started_after = filter.startedAfter;
    if (filter.startedBefore) binds.started_before = filter.startedBefore;
    return {
      shape: {
        teamName: !!filter.teamName,
        states: states.length,
        startedAfter: !!filter.startedAfter,
        startedBefore: !!filter.startedBefore,
        owner,
        restricted: this.runs.kind === 'owner',
      },
      binds,
    };
  }

  private toRun(row: Row): TeamRun {
    return {
      execId: str(row.teamExecId),
      teamName: str(row.teamName),
      owner: strOrNull(row.teamOwner) ?? this.catalog.sessionUser,
      state: str(row.state) as TeamRunState,
      startDate: dateOrNull(row.startDate),
      endDate: dateOrNull(row.endDate),
      instanceId: numOrNull(row.teamInstanceId),
    };
  }

  private toTask(row: Row): TaskRun {
    return {
      teamExecId: str(row.teamExecId),
      teamName: str(row.teamName),
      owner: strOrNull(row.taskOwner) ?? this.catalog.sessionUser,
      agentName: str(row.agentName),
      taskName: strOrNull(row.taskName),
      taskOrder: num(row.taskOrder),
      conversationParams: jsonOrNull(row.conversationParams),
      conversationId: strOrNull(row.conversationId),
      input: strOrNull(row.input),
      result: strOrNull(row.result),
      state: str(row.state) as TeamRunState,
      startDate: dateOrNull(row.startDate),
      endDate: dateOrNull(row.endDate),
    };
  }

  private toToolCall(row: Row): ToolCall {
    return {
      invocationId: str(row.invocationId),
      teamExecId: str(row.teamExecId),
      taskOrder: numOrNull(row.taskOrder),
      toolOwner: strOrNull(row.toolOwner) ?? this.catalog.sessionUser,
      toolName: strOrNull(row.toolName),
      agentName: strOrNull(row.agentName),
      taskName: strOrNull(row.taskName),
      startDate: dateOrNull(row.startDate),
      endDate: dateOrNull(row.endDate),
      input: strOrNull(row.input),
      output: strOrNull(row.output),
      toolOutput: strOrNull(row.toolOutput),
    };
  }
}
