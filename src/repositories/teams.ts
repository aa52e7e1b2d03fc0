import type { Catalog } from '../db/catalog.js';
import type { Driver } from '../db/driver.js';
import {
  type Fragment,
  fetchForKeys,
  fetchPage,
  fetchRows,
  type Page,
  type Query,
} from '../db/sql/statement.js';
import { emptyStats, teamSql } from '../db/sql/teams.js';
import { type AppError, notFound } from '../errors.js';
import { nearestName, unknownTeamMessage } from '../model/names.js';
import type { Team, TeamFilter, TeamStats, TeamTool } from '../model/team.js';
import type { Viewer } from '../model/viewer.js';
import type { TeamToolsCache } from './team-tools-cache.js';
import { requireView } from './views.js';

const ALL_PAGE = 1000;

export class TeamRepository {
  private readonly sql;

  constructor(
    private readonly driver: Driver,
    private readonly catalog: Catalog,
    private readonly viewer: Viewer,
    /** Shared across requests; without it, every call reads the catalog. */
    private readonly toolsCache?: TeamToolsCache,
  ) {
    this.sql = teamSql(catalog);
  }

  async page(filter: TeamFilter, offset: number, limit: number): Promise<Page<Team>> {
    requireView(this.catalog.teams);
    return fetchPage(this.driver, this.sql.page(this.viewer, filter, { offset, limit }));
  }

  async byNames(names: readonly string[]): Promise<(Team | null)[]> {
    requireView(this.catalog.teams);
    const found = new Map<string, Team>();
    for (const team of await this.forTeams(names, this.sql.byNames)) {
      if (!found.has(team.name)) found.set(team.name, team);
    }
    return names.map((name) => found.get(name) ?? null);
  }

  /**
   * The one answer to a team name no visible team has: NOT_FOUND naming the near miss
   * (model/names.ts). The visible names are read once per request, however many fields of
   * the operation name unknown teams; the name itself was bounded at the edge
   * (schema/bounds.ts), which keeps the comparison cheap.
   */
  async unknown(name: string): Promise<AppError> {
    requireView(this.catalog.teams);
    this.names ??= fetchRows(this.driver, this.sql.names(this.viewer));
    return notFound(unknownTeamMessage(name, nearestName(name, await this.names)));
  }

  private names: Promise<string[]> | undefined;

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

  /**
   * Each team's tools (through its members' tasks), one statement per 1,000 teams not in the
   * cross-request cache (team-tools-cache.ts).
   */
  async toolsOf(teamNames: readonly string[]): Promise<TeamTool[][]> {
    requireView(this.catalog.teamAttributes);
    requireView(this.catalog.taskAttributes);
    requireView(this.catalog.tools);
    return this.toolsCache
      ? this.toolsCache.toolsOf(this.viewer, teamNames, (names) => this.readToolsOf(names))
      : this.readToolsOf(teamNames);
  }

  private async readToolsOf(teamNames: readonly string[]): Promise<TeamTool[][]> {
    const byTeam = new Map<string, Map<string, TeamTool>>();
    for (const tool of await this.forTeams(teamNames, this.sql.toolsByTeams)) {
      const tools = byTeam.get(tool.teamName) ?? new Map<string, TeamTool>();
      if (!tools.has(tool.name)) tools.set(tool.name, tool);
      byTeam.set(tool.teamName, tools);
    }
    return teamNames.map((name) => [...(byTeam.get(name)?.values() ?? [])]);
  }

  async statsOf(teamNames: readonly string[]): Promise<TeamStats[]> {
    requireView(this.catalog.teamHistory);
    const found = new Map<string, TeamStats>();
    for (const stats of await this.forTeams(teamNames, this.sql.statsByTeams)) {
      found.set(stats.teamName, stats);
    }
    return teamNames.map((name) => found.get(name) ?? emptyStats(name));
  }

  private forTeams<T>(
    names: readonly string[],
    build: (viewer: Viewer) => (list: Fragment) => Query<T>,
  ): Promise<T[]> {
    return fetchForKeys(this.driver, names, 'team', build(this.viewer));
  }
}
