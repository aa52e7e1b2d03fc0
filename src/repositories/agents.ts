import type { Catalog } from '../db/catalog.js';
import type { Driver } from '../db/driver.js';
import { agentSql } from '../db/sql/agents.js';
import { fetchForKeys } from '../db/sql/in-lists.js';
import { fetchPage, type Page } from '../db/sql/pages.js';
import type { Agent } from '../model/agent.js';
import type { Viewer } from '../model/viewer.js';
import type { CatalogCache } from './catalog-cache.js';
import { requireView } from './views.js';

export type { Page };

/** Stored Agent Specs, limited to what the viewer may see. */
export class AgentRepository {
  private readonly sql;

  constructor(
    private readonly driver: Driver,
    private readonly catalog: Catalog,
    private readonly viewer: Viewer,
    /** Shared across requests, for the agents read without DESCRIBE_AGENT. */
    private readonly catalogCache?: CatalogCache,
  ) {
    this.sql = agentSql(catalog);
  }

  async page(offset: number, limit: number): Promise<Page<Agent>> {
    requireView(this.catalog.agents);
    return fetchPage(this.driver, this.sql.page(this.viewer, { offset, limit }));
  }

  /**
   * Agents by name, in the order of `names` (null where none is visible); see agentSql.byNames
   * for `details`. Without details, through the cross-request cache (catalog-cache.ts): what
   * DESCRIBE_AGENT answers is read fresh.
   */
  async byNames(names: readonly string[], details = true): Promise<(Agent | null)[]> {
    requireView(this.catalog.agents);
    const read = async (missing: readonly string[]) => {
      const found = new Map<string, Agent>();
      for (const agent of await fetchForKeys(
        this.driver,
        missing,
        'name',
        this.sql.byNames(this.viewer, details),
      )) {
        if (!found.has(agent.name)) found.set(agent.name, agent);
      }
      return missing.map((name) => found.get(name) ?? null);
    };
    return this.catalogCache && !details
      ? this.catalogCache.each(this.viewer, 'agent', names, read)
      : read(names);
  }
}
