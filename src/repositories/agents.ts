import type { Catalog } from '../db/catalog.js';
import type { Driver, Row } from '../db/driver.js';
import { dateOrNull, jsonOrNull, num, str, strOrNull } from '../db/rows.js';
import { agentSql } from '../db/sql/agents.js';
import type { Agent, AgentParameter, CallContract } from '../model/agent.js';
import type { Viewer } from '../model/viewer.js';
import { rowsForKeys } from './batch.js';
import { ownerAccess, requireView } from './views.js';

export interface Page<T> {
  readonly items: T[];
  readonly totalCount: number;
}

/**
 * Stored Agent Specs: the catalog row with DESCRIBE_AGENT's JSON read in the same round trip.
 * The description and call contract exist only in that JSON (reference, "Agent Spec
 * procedures"); inputs and outputs come from it too, falling back to the view's columns.
 */
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
    const access = ownerAccess(this.viewer, this.catalog, this.catalog.agents);
    if (access.kind === 'nothing') return { items: [], totalCount: 0 };
    const restricted = access.kind === 'owner';
    const ownerBinds = restricted ? access.binds : {};
    const rows = await this.driver.queryWithAgentDetails(this.sql.page(restricted), {
      ...ownerBinds,
      page_offset: offset,
      page_limit: limit,
    });
    const first = rows[0];
    const totalCount = first
      ? num(first.totalCount)
      : num((await this.driver.query(this.sql.count(restricted), ownerBinds))[0]?.totalCount);
    return { items: rows.map((row) => this.toAgent(row)), totalCount };
  }

  /** Agents by name, in the order of `names` (null where none is visible). */
  async byNames(names: readonly string[]): Promise<(Agent | null)[]> {
    requireView(this.catalog.agents);
    const rows = await rowsForKeys(
      names,
      'name',
      ownerAccess(this.viewer, this.catalog, this.catalog.agents),
      this.sql.byNames,
      (statement, binds) => this.driver.queryWithAgentDetails(statement, binds),
    );
    const found = new Map<string, Agent>();
    for (const row of rows) {
      const agent = this.toAgent(row);
      if (!found.has(agent.name)) found.set(agent.name, agent);
    }
    return names.map((name) => found.get(name) ?? null);
  }

  private toAgent(row: Row): Agent {
    const details = (jsonOrNull(row.agentDetails) ?? {}) as Record<string, unknown>;
    const contract = details.call_contract as Record<string, unknown> | undefined;
    return {
      agentId: num(row.agentId),
      owner: strOrNull(row.owner) ?? this.catalog.sessionUser,
      name: str(row.agentName),
      createTime: dateOrNull(row.createTime),
      description: strOrNull(details.description),
      inputs: parameters(details.inputs ?? jsonOrNull(row.inputs)),
      outputs: parameters(details.outputs ?? jsonOrNull(row.outputs)),
      callContract: contract ? callContract(contract) : null,
    };
  }
}

function parameters(value: unknown): AgentParameter[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((p): p is Record<string, unknown> => typeof p === 'object' && p !== null)
    .map((p) => ({ title: str(p.title), type: strOrNull(p.type) }));
}

function callContract(value: Record<string, unknown>): CallContract {
  return {
    inputFormat: strOrNull(value.input_format),
    requiredKeys: Array.isArray(value.required_keys) ? value.required_keys.map(String) : [],
    nameMatches: strOrNull(value.name_matches),
  };
}
