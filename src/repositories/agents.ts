import type { Catalog } from '../db/catalog.js';
import type { Driver } from '../db/driver.js';
import { agentSql } from '../db/sql/agents.js';
import { fetchForKeys } from '../db/sql/in-lists.js';
import { fetchPage, type Page } from '../db/sql/pages.js';
import type { Agent } from '../model/agent.js';
import type { Viewer } from '../model/viewer.js';
import { requireView } from './views.js';

export type { Page };

/** Stored Agent Specs, limited to what the viewer may see. */
export class AgentRepository {
  private readonly sql;

  constructor(
    private readonly driver: Driver,
    private readonly catalog: Catalog,
    private readonly viewer: Viewer,
  ) {
    this.sql = agentSql(catalog);
  }

  async page(offset: number, limit: number): Promise<Page<Agent>> {
    requireView(this.catalog.agents);
    return fetchPage(this.driver, this.sql.page(this.viewer, { offset, limit }));
  }

  /** Agents by name, in the order of `names` (null where none is visible); see agentSql.byNames for `details`. */
  async byNames(names: readonly string[], details = true): Promise<(Agent | null)[]> {
    requireView(this.catalog.agents);
    const found = new Map<string, Agent>();
    for (const agent of await fetchForKeys(
      this.driver,
      names,
      'name',
      this.sql.byNames(this.viewer, details),
    )) {
      if (!found.has(agent.name)) found.set(agent.name, agent);
    }
    return names.map((name) => found.get(name) ?? null);
  }
}
