import { type Catalog, ownerColumn, type ViewInfo } from '../catalog.js';
import type { Statement } from '../driver.js';
import { OWNED_BY_VIEWER, PAGE, perCatalog, statement, whereClause } from './statement.js';
import { durationMsExpression } from './team-history.js';

/**
 * The Select AI team and tool catalog (reference: USER_/DBA_AI_AGENT_TEAMS and the
 * attribute views). A team's tools are those of its members' tasks: team attribute
 * `agents` = [{name, task}], task attribute `tools` = [tool names]. JSON_TABLE unnests both
 * in Oracle and PostgreSQL alike, in the order the team lists its members and each task its
 * tools. `restricted` limits DBA_ rows to the viewer's owner.
 */

/** `AND a.OWNER = b.OWNER` for DBA_ views; USER_ views are already one owner's rows. */
function sameOwner(view: ViewInfo, a: string, b: string): string {
  return ownerColumn(view) ? `AND ${a}.OWNER = ${b}.OWNER` : '';
}

export interface TeamQueryShape {
  readonly nameContains: boolean;
  readonly owner: boolean;
  readonly restricted: boolean;
}

export const teamSql = perCatalog((catalog: Catalog) => {
  const teams = catalog.teams;
  const name = catalog.columns.teamName;
  const owner = ownerColumn(teams);
  const select = `${owner ? 'OWNER' : 'NULL AS OWNER'}, ${name} AS TEAM_NAME, DESCRIPTION, ${
    teams.columns?.has('STATUS') ? 'STATUS' : 'NULL AS STATUS'
  }`;
  const order = `${name}${owner ? ', OWNER' : ''}`;
  const toolAttr = catalog.toolAttributes;
  const typeOf = (alias: string, tool: string, toolOwner: string) =>
    `${alias}.TOOL_NAME = ${tool} AND ${alias}.ATTRIBUTE_NAME = 'tool_type' ${
      ownerColumn(toolAttr) ? `AND ${alias}.OWNER = ${toolOwner}` : ''
    }`;
  const where = (shape: TeamQueryShape) =>
    whereClause([
      ...(shape.nameContains ? [`UPPER(${name}) LIKE :name_pattern ESCAPE '\\'`] : []),
      ...(shape.owner ? ['OWNER = :owner'] : []),
      ...(shape.restricted ? [`OWNER = ${OWNED_BY_VIEWER}`] : []),
    ]);
  const viewerOwns = (column: string, restricted: boolean) =>
    restricted ? `AND ${column} = ${OWNED_BY_VIEWER}` : '';

  return {
    page: (shape: TeamQueryShape): Statement =>
      statement(
        'teams.page',
        `SELECT ${select}, COUNT(*) OVER () AS TOTAL_COUNT FROM ${teams.name}
         ${where(shape)} ORDER BY ${order} ${PAGE}`,
      ),
    count: (shape: TeamQueryShape): Statement =>
      statement('teams.count', `SELECT COUNT(*) AS TOTAL_COUNT FROM ${teams.name} ${where(shape)}`),
    byNames: (names: string, restricted: boolean): Statement =>
      statement(
        'teams.byNames',
        `SELECT ${select} FROM ${teams.name}
         WHERE ${name} IN (${names}) ${viewerOwns('OWNER', restricted)} ORDER BY ${order}`,
      ),
    toolsByTeams: (names: string, restricted: boolean): Statement =>
      statement(
        'teams.tools',
        `SELECT ta.${name} AS TEAM_NAME, m.AGENT_NAME, m.TASK_NAME, tl.TOOL_NAME,
           ${catalog.columns.toolId ? `tl.${catalog.columns.toolId}` : 'NULL'} AS TOOL_ID,
           ${ownerColumn(catalog.tools) ? 'tl.OWNER' : 'NULL'} AS OWNER,
           ins.ATTRIBUTE_VALUE AS INSTRUCTION, typ.ATTRIBUTE_VALUE AS TOOL_TYPE
         FROM ${catalog.teamAttributes.name} ta
         CROSS JOIN JSON_TABLE(ta.ATTRIBUTE_VALUE, '$[*]' COLUMNS (
           MEMBER_ORDER FOR ORDINALITY, AGENT_NAME VARCHAR(128) PATH '$.name',
           TASK_NAME VARCHAR(128) PATH '$.task')) m
         JOIN ${catalog.taskAttributes.name} ka
           ON ka.TASK_NAME = m.TASK_NAME AND ka.ATTRIBUTE_NAME = 'tools' ${sameOwner(catalog.taskAttributes, 'ka', 'ta')}
         CROSS JOIN JSON_TABLE(ka.ATTRIBUTE_VALUE, '$[*]' COLUMNS (
           TOOL_ORDER FOR ORDINALITY, TOOL_NAME VARCHAR(128) PATH '$')) kt
         JOIN ${catalog.tools.name} tl ON tl.TOOL_NAME = kt.TOOL_NAME ${sameOwner(catalog.tools, 'tl', 'ta')}
         LEFT JOIN ${toolAttr.name} ins
           ON ins.TOOL_NAME = tl.TOOL_NAME AND ins.ATTRIBUTE_NAME = 'instruction' ${sameOwner(toolAttr, 'ins', 'tl')}
         LEFT JOIN ${toolAttr.name} typ ON ${typeOf('typ', 'tl.TOOL_NAME', 'tl.OWNER')}
         WHERE ta.ATTRIBUTE_NAME = 'agents' AND ta.${name} IN (${names}) ${viewerOwns('ta.OWNER', restricted)}
         ORDER BY ta.${name}, m.MEMBER_ORDER, kt.TOOL_ORDER`,
      ),
    statsByTeams: (names: string, restricted: boolean): Statement => {
      const history = catalog.teamHistory.name;
      const toolOwner = ownerColumn(catalog.toolHistory, ['TOOL_OWNER']) ? 'c.TOOL_OWNER' : 'NULL';
      const byState = (state: string) =>
        `SUM(CASE WHEN h.STATE = '${state}' THEN 1 ELSE 0 END) AS ${state}`;
      return statement(
        'teams.stats',
        `SELECT r.*, w.HUMAN_WAIT_COUNT, w.HUMAN_WAIT_TOTAL_MS, w.HUMAN_WAIT_AVG_MS
         FROM (
           SELECT h.TEAM_NAME, COUNT(*) AS RUN_COUNT,
             ${['RUNNING', 'WAITING_FOR_HUMAN', 'RESUMING', 'SUCCEEDED', 'FAILED'].map(byState).join(', ')},
             1.0 * SUM(CASE WHEN h.STATE = 'SUCCEEDED' THEN 1 ELSE 0 END)
               / NULLIF(SUM(CASE WHEN h.STATE IN ('SUCCEEDED', 'FAILED') THEN 1 ELSE 0 END), 0) AS SUCCESS_RATE,
             PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY ${durationMsExpression('h')}) AS DURATION_P50_MS,
             PERCENTILE_CONT(0.95) WITHIN GROUP (ORDER BY ${durationMsExpression('h')}) AS DURATION_P95_MS
           FROM ${history} h WHERE h.TEAM_NAME IN (${names}) ${viewerOwns('h.TEAM_OWNER', restricted)}
           GROUP BY h.TEAM_NAME
         ) r
         LEFT JOIN (
           SELECT h.TEAM_NAME, COUNT(*) AS HUMAN_WAIT_COUNT,
             SUM(${durationMsExpression('c')}) AS HUMAN_WAIT_TOTAL_MS,
             AVG(${durationMsExpression('c')}) AS HUMAN_WAIT_AVG_MS
           FROM ${catalog.toolHistory.name} c
           JOIN ${history} h ON h.TEAM_EXEC_ID = c.TEAM_EXEC_ID
           JOIN ${toolAttr.name} typ ON ${typeOf('typ', 'c.TOOL_NAME', toolOwner)}
           WHERE h.TEAM_NAME IN (${names}) ${viewerOwns('h.TEAM_OWNER', restricted)} AND c.END_DATE IS NOT NULL
             AND CAST(typ.ATTRIBUTE_VALUE AS VARCHAR(30)) = 'HUMAN'
           GROUP BY h.TEAM_NAME
         ) w ON w.TEAM_NAME = r.TEAM_NAME`,
      );
    },
  };
});
