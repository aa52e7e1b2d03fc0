import { type Catalog, columnOrNull } from '../catalog.js';
import type { Statement } from '../driver.js';
import { OWNED_BY_VIEWER, PAGE, perCatalog, statement, whereClause } from './statement.js';

/**
 * Stored Agent Specs from USER_/DBA_AI_AGENTS. USER_ views have no OWNER column (the
 * repository fills in the session user); the Select AI shape of the view has no AGENT_ID,
 * CREATE_TIME or INPUTS, so those read as NULL there. `restricted` limits DBA_ rows to the
 * viewer's owner.
 */
export const agentSql = perCatalog((catalog: Catalog) => {
  const view = catalog.agents;
  const hasOwner = view.columns?.has('OWNER') ?? false;
  const select = [
    columnOrNull(view, 'AGENT_ID'),
    columnOrNull(view, 'OWNER'),
    'AGENT_NAME',
    view.columns?.has('CREATE_TIME') ? 'CREATE_TIME' : columnOrNull(view, 'CREATED', 'CREATE_TIME'),
    columnOrNull(view, 'INPUTS'),
    columnOrNull(view, 'OUTPUTS'),
  ].join(', ');
  const order = hasOwner ? 'OWNER, AGENT_NAME' : 'AGENT_NAME';
  const owned = (restricted: boolean) => (restricted ? [`OWNER = ${OWNED_BY_VIEWER}`] : []);
  return {
    page: (restricted: boolean): Statement =>
      statement(
        'agents.page',
        `SELECT ${select}, COUNT(*) OVER () AS TOTAL_COUNT
         FROM ${view.name} ${whereClause(owned(restricted))} ORDER BY ${order} ${PAGE}`,
      ),
    count: (restricted: boolean): Statement =>
      statement(
        'agents.count',
        `SELECT COUNT(*) AS TOTAL_COUNT FROM ${view.name} ${whereClause(owned(restricted))}`,
      ),
    byNames: (names: string, restricted: boolean): Statement =>
      statement(
        'agents.byNames',
        `SELECT ${select} FROM ${view.name}
         ${whereClause([`AGENT_NAME IN (${names})`, ...owned(restricted)])} ORDER BY ${order}`,
      ),
  };
});
