import type { CatalogTool } from '../a2a/drift.js';
import type { A2ACatalog } from '../a2a/standin.js';
import type { Catalog } from '../db/catalog.js';
import type { Driver } from '../db/driver.js';
import { str, strOrNull } from '../db/rows.js';
import { a2aCatalogSql } from '../db/sql/a2a-catalog.js';
import { requireView } from './views.js';

/**
 * The team and tool catalog that the embedded A2A stand-in publishes, read in one round trip.
 * Where the tools view has no TOOL_ID column the tool name stands in for the id.
 */
export class A2ACatalogRepository {
  private readonly sql;

  constructor(
    private readonly driver: Driver,
    private readonly catalog: Catalog,
  ) {
    this.sql = a2aCatalogSql(catalog);
  }

  async load(): Promise<A2ACatalog> {
    const { teams, teamAttributes, taskAttributes, tools, toolAttributes } = this.catalog;
    for (const view of [teams, teamAttributes, taskAttributes, tools, toolAttributes])
      requireView(view);
    const rows = await this.driver.query(this.sql.teamsWithTools);
    const teamsByKey = new Map<
      string,
      { name: string; description: string | null; tools: CatalogTool[] }
    >();
    for (const row of rows) {
      // Two owners may each have a team of the same name in the DBA_ views.
      const key = `${str(row.owner)}.${str(row.teamName)}`;
      let team = teamsByKey.get(key);
      if (!team) {
        team = { name: str(row.teamName), description: strOrNull(row.teamDescription), tools: [] };
        teamsByKey.set(key, team);
      }
      const toolName = strOrNull(row.toolName);
      if (toolName !== null) {
        team.tools.push({
          toolId: strOrNull(row.toolId) ?? toolName,
          name: toolName,
          instruction: strOrNull(row.instruction),
        });
      }
    }
    return { teams: [...teamsByKey.values()] };
  }
}
