import { type Catalog, columnOrNull } from '../catalog.js';
import type { Statement } from '../driver.js';
import { PAGE, statement } from './statement.js';

/**
 * Stored Agent Specs from USER_/DBA_AI_AGENTS. USER_ views have no OWNER column (the
 * repository fills in the session user); the Select AI shape of the view has no AGENT_ID,
 * CREATE_TIME or INPUTS, so those read as NULL there.
 */
function selectList(catalog: Catalog): string {
  const view = catalog.agents;
  return [
    columnOrNull(view, 'AGENT_ID'),
    columnOrNull(view, 'OWNER'),
    'AGENT_NAME',
    view.columns?.has('CREATE_TIME') ? 'CREATE_TIME' : columnOrNull(view, 'CREATED', 'CREATE_TIME'),
    columnOrNull(view, 'INPUTS'),
    columnOrNull(view, 'OUTPUTS'),
  ].join(', ');
}

export function agentSql(catalog: Catalog) {
  const view = catalog.agents.name;
  const order = catalog.agents.columns?.has('OWNER') ? 'OWNER, AGENT_NAME' : 'AGENT_NAME';
  return {
    page: statement(
      'agents.page',
      `SELECT ${selectList(catalog)}, COUNT(*) OVER () AS TOTAL_COUNT
       FROM ${view} ORDER BY ${order} ${PAGE}`,
    ),
    count: statement('agents.count', `SELECT COUNT(*) AS TOTAL_COUNT FROM ${view}`),
    byNames: (inList: string): Statement =>
      statement(
        'agents.byNames',
        `SELECT ${selectList(catalog)} FROM ${view} WHERE AGENT_NAME IN (${inList}) ORDER BY ${order}`,
      ),
  };
}
