import { type Catalog, ownerColumn } from '../db/catalog.js';
import type { Driver, Row, Statement } from '../db/driver.js';
import { num, numOrNull, roundedOrNull, str, strOrNull } from '../db/rows.js';
import { teamSql } from '../db/sql/teams.js';
import {
  TEAM_RUN_STATES,
  type Team,
  type TeamFilter,
  type TeamRunState,
  type TeamStats,
  type TeamTool,
} from '../model/team.js';
import type { Viewer } from '../model/viewer.js';
import type { Page } from './agents.js';
import { rowsForKeys } from './batch.js';
import { type OwnerAccess, ownerAccess, requireView } from './views.js';

/** `%text%` for LIKE, with LIKE's own wildcards in the text matched literally. */
export function containsPattern(text: string): string {
  return `%${text.toUpperCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const ALL_PAGE = 1000;

export class TeamRepository {
  private readonly sql;

  private readonly access: OwnerAccess;

  constructor(
    private readonly driver: Driver,
    private readonly catalog: Catalog,
    viewer: Viewer,
  ) {
    this.sql = teamSql(catalog);
    this.access = ownerAccess(viewer, catalog, catalog.teams);
  }

  private get restricted(): boolean {
    return this.access.kind === 'owner';
  }

  private get ownerBinds() {
    return this.access.kind === 'owner' ? this.access.binds : {};
  }

  async page(filter: TeamFilter, offset: number, limit: number): Promise<Page<Team>> {
    requireView(this.catalog.teams);
    const owner = this.ownerBind(filter.owner);
    if (owner === false || this.access.kind === 'nothing') return { items: [], totalCount: 0 };
    const shape = {
      nameContains: !!filter.nameContains,
      owner: owner !== null,
      restricted: this.restricted,
    };
    const binds = {
      ...this.ownerBinds,
      ...(filter.nameContains ? { name_pattern: containsPattern(filter.nameContains) } : {}),
      ...(owner !== null ? { owner } : {}),
    };
    const rows = await this.driver.query(this.sql.page(shape), {
      ...binds,
      page_offset: offset,
      page_limit: limit,
    });
    const totalCount = rows[0]
      ? num(rows[0].totalCount)
      : num((await this.driver.query(this.sql.count(shape), binds))[0]?.totalCount);
    return { items: rows.map((row) => this.toTeam(row)), totalCount };
  }

  async byNames(names: readonly string[]): Promise<(Team | null)[]> {
    requireView(this.catalog.teams);
    const found = new Map<string, Team>();
    for (const row of await this.rowsFor(names, this.sql.byNames)) {
      const team = this.toTeam(row);
      if (!found.has(team.name)) found.set(team.name, team);
    }
    return names.map((name) => found.get(name) ?? null);
  }

  /** Every visible team with its tools: what the embedded A2A stand-in publishes. */
  async allWithTools(): Promise<{ team: Team; tools: TeamTool[] }[]> {
    const teams: Team[] = [];
    for (let offset = 0; ; offset += ALL_PAGE) {
      const page = await this.page({}, offset, ALL_PAGE);
      teams.push(...page.items);
      if (teams.length >= page.totalCount || page.items.length === 0) break;
    }
    const tools = await this.toolsOf(teams.map((team) => team.name));
    return teams.map((team, i) => ({ team, tools: tools[i] ?? [] }));
  }

  /** Each team's tools (through its members' tasks), one statement per 1,000 teams. */
  async toolsOf(teamNames: readonly string[]): Promise<TeamTool[][]> {
    requireView(this.catalog.teamAttributes);
    requireView(this.catalog.taskAttributes);
    requireView(this.catalog.tools);
    const byTeam = new Map<string, Map<string, TeamTool>>();
    for (const row of await this.rowsFor(teamNames, this.sql.toolsByTeams)) {
      const teamName = str(row.teamName);
      const tools = byTeam.get(teamName) ?? new Map<string, TeamTool>();
      const name = str(row.toolName);
      if (!tools.has(name)) {
        tools.set(name, {
          teamName,
          toolId: strOrNull(row.toolId),
          name,
          owner: strOrNull(row.owner) ?? this.catalog.sessionUser,
          instruction: strOrNull(row.instruction),
          toolType: strOrNull(row.toolType),
          agentName: strOrNull(row.agentName),
          taskName: strOrNull(row.taskName),
        });
      }
      byTeam.set(teamName, tools);
    }
    return teamNames.map((name) => [...(byTeam.get(name)?.values() ?? [])]);
  }

  async statsOf(teamNames: readonly string[]): Promise<TeamStats[]> {
    requireView(this.catalog.teamHistory);
    const found = new Map<string, TeamStats>();
    for (const row of await this.rowsFor(teamNames, this.sql.statsByTeams)) {
      const stats = toStats(row);
      found.set(stats.teamName, stats);
    }
    return teamNames.map((name) => found.get(name) ?? emptyStats(name));
  }

  private rowsFor(
    names: readonly string[],
    build: (list: string, restricted: boolean) => Statement,
  ) {
    return rowsForKeys(names, 'team', this.access, build, (statement, binds) =>
      this.driver.query(statement, binds),
    );
  }

  /** The owner to filter on; false when a USER_ view cannot hold that owner's rows. */
  private ownerBind(owner: string | null | undefined): string | null | false {
    if (!owner) return null;
    if (ownerColumn(this.catalog.teams)) return owner;
    return owner === this.catalog.sessionUser ? null : false;
  }

  private toTeam(row: Row): Team {
    return {
      name: str(row.teamName),
      owner: strOrNull(row.owner) ?? this.catalog.sessionUser,
      description: strOrNull(row.description),
      status: strOrNull(row.status),
    };
  }
}

function byState(read: (state: TeamRunState) => number): Record<TeamRunState, number> {
  return Object.fromEntries(TEAM_RUN_STATES.map((s) => [s, read(s)])) as Record<
    TeamRunState,
    number
  >;
}

function toStats(row: Row): TeamStats {
  const runsByState = byState((state) =>
    num(row[state.toLowerCase().replace(/_([a-z])/g, (_, c) => c.toUpperCase())]),
  );
  return {
    teamName: str(row.teamName),
    runCount: num(row.runCount),
    runsByState,
    successRate: roundedOrNull(row.successRate, 3),
    durationP50Ms: roundedOrNull(row.durationP50Ms, 1),
    durationP95Ms: roundedOrNull(row.durationP95Ms, 1),
    humanWaitCount: num(row.humanWaitCount),
    humanWaitTotalMs: numOrNull(row.humanWaitTotalMs),
    humanWaitAvgMs: roundedOrNull(row.humanWaitAvgMs, 1),
  };
}

function emptyStats(teamName: string): TeamStats {
  return {
    teamName,
    runCount: 0,
    runsByState: byState(() => 0),
    successRate: null,
    durationP50Ms: null,
    durationP95Ms: null,
    humanWaitCount: 0,
    humanWaitTotalMs: null,
    humanWaitAvgMs: null,
  };
}
