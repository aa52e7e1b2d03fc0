import type { Catalog } from '../db/catalog.js';
import type { Driver } from '../db/driver.js';
import type { Fragment } from '../db/sql/fragment.js';
import { fetchForKeys } from '../db/sql/in-lists.js';
import { fetchPage, type Page } from '../db/sql/pages.js';
import { fetchRows, type Query } from '../db/sql/query.js';
import { emptyStats, teamSql } from '../db/sql/teams.js';
import { type AppError, notFound } from '../errors.js';
import { nearestName, unknownTeamMessage } from '../model/names.js';
import {
  namesOfTeamKeys,
  perTeamKey,
  type Team,
  type TeamFilter,
  type TeamStats,
  type TeamTool,
  teamKey,
  teamRefOf,
} from '../model/team.js';
import type { Viewer } from '../model/viewer.js';
import type { CatalogCache } from './catalog-cache.js';
import { requireView } from './views.js';

const ALL_PAGE = 1000;

export class TeamRepository {
  private readonly sql;

  constructor(
    private readonly driver: Driver,
    private readonly catalog: Catalog,
    private readonly viewer: Viewer,
    /** Shared across requests; without it, every call reads the catalog. */
    private readonly catalogCache?: CatalogCache,
  ) {
    this.sql = teamSql(catalog);
  }

  /** A page of the visible teams, through the cross-request cache (catalog-cache.ts). */
  async page(filter: TeamFilter, offset: number, limit: number): Promise<Page<Team>> {
    requireView(this.catalog.teams);
    const read = () =>
      fetchPage(this.driver, this.sql.page(this.viewer, filter, { offset, limit }));
    if (!this.catalogCache) return read();
    const key = JSON.stringify([filter.nameContains ?? null, filter.owner ?? null, offset, limit]);
    return this.catalogCache.one(this.viewer, `teams.page${key}`, read);
  }

  /**
   * Teams by key (src/model/team.ts): a team key is its owner's team of that name, a bare name
   * the first visible team of it by owner (as `team(name:)` finds one); through the
   * cross-request cache, a missing team as well.
   */
  async byKeys(keys: readonly string[]): Promise<(Team | null)[]> {
    requireView(this.catalog.teams);
    const read = async (missing: readonly string[]) => {
      const teams = await this.forTeams(missing, this.sql.byNames);
      return perTeamKey(missing, teams, (team) => team).map((found) => found[0] ?? null);
    };
    return this.catalogCache ? this.catalogCache.each(this.viewer, 'team', keys, read) : read(keys);
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
    const tools = await this.toolsOf(teams.map((team) => teamKey(team.owner, team.name)));
    return teams.map((team, i) => ({ team, tools: tools[i] ?? [] }));
  }

  /**
   * Each team's tools (through its members' tasks), by team key (src/model/team.ts), one
   * statement per 1,000 team names not in the cross-request cache (catalog-cache.ts).
   */
  async toolsOf(teamKeys: readonly string[]): Promise<TeamTool[][]> {
    requireView(this.catalog.teamAttributes);
    requireView(this.catalog.taskAttributes);
    requireView(this.catalog.tools);
    return this.catalogCache
      ? this.catalogCache.each(this.viewer, 'tools', teamKeys, (keys) => this.readToolsOf(keys))
      : this.readToolsOf(teamKeys);
  }

  private async readToolsOf(teamKeys: readonly string[]): Promise<TeamTool[][]> {
    const tools = await this.forTeams(teamKeys, this.sql.toolsByTeams);
    // A tool two members' tasks list is the team's once, where it is first listed.
    const firstByName = (found: TeamTool[]) => {
      const byName = new Map<string, TeamTool>();
      for (const tool of found) if (!byName.has(tool.name)) byName.set(tool.name, tool);
      return [...byName.values()];
    };
    return perTeamKey(teamKeys, tools, (tool) => ({
      owner: tool.teamOwner,
      name: tool.teamName,
    })).map(firstByName);
  }

  /** Each team's run statistics, by team key (src/model/team.ts). */
  async statsOf(teamKeys: readonly string[]): Promise<TeamStats[]> {
    requireView(this.catalog.teamHistory);
    const stats = await this.forTeams(teamKeys, this.sql.statsByTeams);
    return perTeamKey(teamKeys, stats, (s) => ({ owner: s.teamOwner, name: s.teamName })).map(
      (found, i) => {
        const { owner, name } = teamRefOf(teamKeys[i] as string);
        return found[0] ?? emptyStats(name, owner ?? this.catalog.sessionUser);
      },
    );
  }

  /** The rows of the keys' teams, read by their names (an owner's rows are told apart after). */
  private forTeams<T>(
    keys: readonly string[],
    build: (viewer: Viewer) => (list: Fragment) => Query<T>,
  ): Promise<T[]> {
    return fetchForKeys(this.driver, namesOfTeamKeys(keys), 'team', build(this.viewer));
  }
}
