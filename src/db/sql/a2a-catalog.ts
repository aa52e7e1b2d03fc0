import type { Catalog, ViewInfo } from '../catalog.js';
import type { Statement } from '../driver.js';
import { statement } from './statement.js';

/**
 * Every visible team with the tools its tasks may call, in one statement: the team's `agents`
 * attribute (`[{"name", "task"}]`) gives its tasks, each task's `tools` attribute
 * (`["TOOL", …]`) its tools, and the tool's `instruction` attribute the skill description
 * (seed 001). One row per team and tool, in member then tool order; a team without tools is
 * one row with NULL tool columns. JSON_TABLE reads both attributes in Oracle and in
 * PostgreSQL 18 (Oracle takes VARCHAR as VARCHAR2). DBA_ views match owners on every join.
 */
export function a2aCatalogSql(catalog: Catalog): { teamsWithTools: Statement } {
  const owned = (view: ViewInfo) => view.columns?.has('OWNER') === true;
  const sameOwner = (view: ViewInfo, a: string, b: string) =>
    owned(view) ? ` AND ${a}.OWNER = ${b}.OWNER` : '';
  const { teams, teamAttributes, taskAttributes, tools, toolAttributes } = catalog;
  return {
    teamsWithTools: statement(
      'a2aCatalog.teamsWithTools',
      `SELECT ${owned(teams) ? 't.OWNER' : 'NULL AS OWNER'}, t.AGENT_TEAM_NAME AS TEAM_NAME, t.DESCRIPTION AS TEAM_DESCRIPTION,
              x.TOOL_ID, x.TOOL_NAME, x.INSTRUCTION
       FROM ${teams.name} t
       LEFT JOIN (
         SELECT ${owned(teamAttributes) ? 'ta.OWNER' : 'NULL'} AS OWNER, ta.AGENT_TEAM_NAME,
                m.MEMBER_ORDER, k.TOOL_ORDER,
                ${tools.columns?.has('TOOL_ID') ? 'tl.TOOL_ID' : 'NULL AS TOOL_ID'}, tl.TOOL_NAME,
                ins.ATTRIBUTE_VALUE AS INSTRUCTION
         FROM ${teamAttributes.name} ta,
              JSON_TABLE(ta.ATTRIBUTE_VALUE, '$[*]' COLUMNS (
                MEMBER_ORDER FOR ORDINALITY, TASK_NAME VARCHAR(128) PATH '$.task')) m,
              ${taskAttributes.name} ka,
              JSON_TABLE(ka.ATTRIBUTE_VALUE, '$[*]' COLUMNS (
                TOOL_ORDER FOR ORDINALITY, TOOL_NAME VARCHAR(128) PATH '$')) k,
              ${tools.name} tl
              LEFT JOIN ${toolAttributes.name} ins
                ON ins.TOOL_NAME = tl.TOOL_NAME AND ins.ATTRIBUTE_NAME = 'instruction'${sameOwner(toolAttributes, 'ins', 'tl')}
         WHERE ta.ATTRIBUTE_NAME = 'agents'
           AND ka.TASK_NAME = m.TASK_NAME AND ka.ATTRIBUTE_NAME = 'tools'${sameOwner(taskAttributes, 'ka', 'ta')}
           AND tl.TOOL_NAME = k.TOOL_NAME${sameOwner(tools, 'tl', 'ta')}
       ) x ON x.AGENT_TEAM_NAME = t.AGENT_TEAM_NAME${sameOwner(teams, 'x', 't')}
       ORDER BY ${owned(teams) ? 't.OWNER, ' : ''}t.AGENT_TEAM_NAME, x.MEMBER_ORDER, x.TOOL_ORDER`,
    ),
  };
}
