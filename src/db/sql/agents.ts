import type { Agent, AgentParameter, CallContract } from '../../model/agent.js';
import type { Viewer } from '../../model/viewer.js';
import type { Catalog } from '../catalog.js';
import type { Row } from '../driver.js';
import { dateOrNull, jsonOrNull, num, str, strOrNull } from '../rows.js';
import { type Fragment, type Literal, sql } from './fragment.js';
import type { JsonList } from './json-lists.js';
import { viewerOwns } from './owners.js';
import { type PageWindow, paged } from './pages.js';
import { perCatalog, query } from './query.js';

/**
 * Stored Agent Specs from USER_/DBA_AI_AGENTS, each row with DESCRIBE_AGENT's JSON read in
 * the same round trip. USER_ views have no OWNER column (the session user owns every row);
 * the Select AI shape of the view (catalog.ts, agentsViewShape) has AGENT_ID too but no
 * CREATE_TIME or INPUTS, so those read as NULL there, and has DESCRIPTION, CREATED,
 * LAST_MODIFIED and STATUS instead, read when present (the Agent Spec shape's statements keep
 * their text). Each column is read when the view has it, whichever the shape. The Agent Spec description
 * and call contract exist only in the JSON (reference, "Agent Spec procedures"); inputs and
 * outputs come from it too, falling back to the view's columns.
 */
export const agentSql = perCatalog((catalog: Catalog) => {
  const view = catalog.agents;
  const agents = sql.identifier(catalog, view);
  const hasOwner = view.columns?.has('OWNER') ?? false;
  /** `COLUMN AS alias` when the view has the column, else `NULL AS alias`. */
  const columnOrNull = <A extends string>(column: string, alias: Literal<A>) =>
    view.columns?.has(column)
      ? sql`${sql.identifier(catalog, view, column)} AS ${sql.raw(alias)}`
      : sql`NULL AS ${sql.raw(alias)}`;
  const selectItems = [
    columnOrNull('AGENT_ID', 'AGENT_ID'),
    columnOrNull('OWNER', 'OWNER'),
    sql`AGENT_NAME`,
    view.columns?.has('CREATE_TIME') ? sql`CREATE_TIME` : columnOrNull('CREATED', 'CREATE_TIME'),
    columnOrNull('INPUTS', 'INPUTS'),
    columnOrNull('OUTPUTS', 'OUTPUTS'),
    ...SELECT_AI_COLUMNS.filter((column) => view.columns?.has(column)).map((column) =>
      sql.identifier(catalog, view, column),
    ),
  ];
  const select = sql.join(selectItems, ', ');
  const orderedBy = hasOwner ? ['OWNER', 'AGENT_NAME'] : ['AGENT_NAME'];
  const order = hasOwner ? sql`OWNER, AGENT_NAME` : sql`AGENT_NAME`;
  const options = { agentDetails: true, orderedBy };
  const owned = (viewer: Viewer) => viewerOwns(catalog, view, viewer)('OWNER');

  const toAgent = (row: Row): Agent => {
    const details = (jsonOrNull(row.agentDetails) ?? {}) as Record<string, unknown>;
    const contract = details.call_contract as Record<string, unknown> | undefined;
    return {
      agentId: num(row.agentId),
      owner: strOrNull(row.owner) ?? catalog.sessionUser,
      name: str(row.agentName),
      createTime: dateOrNull(row.createTime),
      description: strOrNull(details.description) ?? strOrNull(row.description),
      status: strOrNull(row.status),
      lastModified: dateOrNull(row.lastModified),
      inputs: parameters(details.inputs ?? jsonOrNull(row.inputs)),
      outputs: parameters(details.outputs ?? jsonOrNull(row.outputs)),
      callContract: contract ? callContract(contract) : null,
    };
  };

  return {
    /**
     * The agents named by `names` (an IN list or a subquery of names), without DESCRIBE_AGENT
     * as byNames(viewer, false) reads them, as a positional JSON list of another statement
     * (a planned list of tasks reads the agents it names so, src/db/sql/history-plan.ts).
     */
    namedList: (viewer: Viewer, names: Fragment): JsonList<Agent> => ({
      parts: {
        select: selectItems,
        from: sql`${agents} ${sql.where(sql`AGENT_NAME IN (${names})`, owned(viewer))}`,
        orderBy: orderedBy,
        // An owner's agents have distinct names.
        totalOrder: true,
      },
      decode: toAgent,
    }),
    page: (viewer: Viewer, window: PageWindow) =>
      paged(
        'agents.page',
        {
          select,
          from: sql`${agents} ${sql.where(owned(viewer))}`,
          orderBy: order,
          count: 'agents.count',
        },
        window,
        toAgent,
        options,
      ),
    /**
     * Without `details`, DESCRIBE_AGENT is not called: description comes from the view's
     * column where it has one, the call contract reads null, inputs and outputs come from
     * the view's columns alone.
     */
    byNames:
      (viewer: Viewer, details = true) =>
      (names: Fragment) =>
        query(
          'agents.byNames',
          sql`SELECT ${select} FROM ${agents}
         ${sql.where(sql`AGENT_NAME IN (${names})`, owned(viewer))} ORDER BY ${order}`,
          toAgent,
          { ...options, agentDetails: details },
        ),
  };
});

/** The Select AI Agent shape's own columns (reference, "Two families of agent objects"). */
const SELECT_AI_COLUMNS = ['DESCRIPTION', 'LAST_MODIFIED', 'STATUS'];

function parameters(value: unknown): AgentParameter[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((p): p is Record<string, unknown> => typeof p === 'object' && p !== null)
    .map((p) => ({ title: str(p.title), type: strOrNull(p.type), required: !('default' in p) }));
}

function callContract(value: Record<string, unknown>): CallContract {
  return {
    inputFormat: strOrNull(value.input_format),
    requiredKeys: Array.isArray(value.required_keys) ? value.required_keys.map(String) : [],
    nameMatches: strOrNull(value.name_matches),
  };
}
