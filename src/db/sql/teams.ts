import {
  TEAM_RUN_STATES,
  type Team,
  type TeamFilter,
  type TeamRunState,
  type TeamStats,
  type TeamTool,
} from '../../model/team.js';
import type { Viewer } from '../../model/viewer.js';
import { type Catalog, ownerColumn, type ViewInfo } from '../catalog.js';
import type { Row } from '../driver.js';
import { num, numOrNull, roundedOrNull, str, strOrNull } from '../rows.js';
import type { Fragment, PagedQuery, PageWindow } from './statement.js';
import { ownedBy, paged, perCatalog, query, sql, viewerOwns } from './statement.js';
import { durationMsExpression } from './team-history.js';

/**
 * The Select AI team and tool catalog (reference: USER_/DBA_AI_AGENT_TEAMS and the
 * attribute views). A team's tools are those of its members' tasks: team attribute
 * `agents` = [{name, task}], task attribute `tools` = [tool names]. JSON_TABLE unnests both
 * in Oracle and PostgreSQL alike, in the order the team lists its members and each task its
 * tools. Every statement shows a viewer the teams of its owner only (the teams view decides).
 * A member's task and tool names match the catalog's as written or upper-cased (the catalog
 * keeps unquoted names in upper case; the JSON keeps what CREATE_TEAM was given).
 * JSON_TABLE's columns are VARCHAR2, the type Oracle's grammar names there (19c takes VARCHAR2,
 * NUMBER, DATE, TIMESTAMP and CLOB; VARCHAR is not among them); the embedded database has a
 * VARCHAR2 type for it (src/db/embedded/plsql.ts).
 */

/** `AND a.OWNER = b.OWNER` for DBA_ views; USER_ views are already one owner's rows. */
function sameOwner(view: ViewInfo, a: string, b: string): string {
  return ownerColumn(view) ? `AND ${a}.OWNER = ${b}.OWNER` : '';
}

/** `%text%` for LIKE, with LIKE's own wildcards in the text matched literally. */
export function containsPattern(text: string): string {
  return `%${text.toUpperCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The tool_type attribute of a tool: its row of `alias`, matched on name (and owner). */
function toolTypeOf(catalog: Catalog, alias: string, tool: string, toolOwner: string): string {
  return `${alias}.TOOL_NAME = ${tool} AND ${alias}.ATTRIBUTE_NAME = 'tool_type' ${
    ownerColumn(catalog.toolAttributes) ? `AND ${alias}.OWNER = ${toolOwner}` : ''
  }`;
}

/** Whether waits for a person can be read: the tool history and the tool attributes. */
export const humanWaitsReadable = (catalog: Catalog): boolean =>
  catalog.toolHistory.columns !== null && catalog.toolAttributes.columns !== null;

/**
 * What a wait for a person is in the history, in one place: a call of a tool whose
 * tool_type attribute is HUMAN (the history itself records no tool type). The JOIN that
 * keeps only such calls of the tool-history alias `call`.
 */
export function humanToolCalls(catalog: Catalog, call: string): string {
  const toolOwner = ownerColumn(catalog.toolHistory, ['TOOL_OWNER'])
    ? `${call}.TOOL_OWNER`
    : 'NULL';
  // The CLOB's first characters, whatever its length (a CAST to VARCHAR raises ORA-22835 on
  // a long value, an instruction, if Oracle evaluates it before the ATTRIBUTE_NAME filter),
  // compared upper-cased: `human` is a HUMAN tool too.
  return `JOIN ${catalog.toolAttributes.name} typ ON ${toolTypeOf(catalog, 'typ', `${call}.TOOL_NAME`, toolOwner)}
    AND UPPER(TRIM(DBMS_LOB.SUBSTR(typ.ATTRIBUTE_VALUE, 30, 1))) = 'HUMAN'`;
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
  /** The teams view decides what a viewer sees of every team statement. */
  const mine = (viewer: Viewer) => viewerOwns(catalog, teams, viewer);
  const toTeam = (row: Row): Team => ({
    name: str(row.teamName),
    owner: strOrNull(row.owner) ?? catalog.sessionUser,
    description: strOrNull(row.description),
    status: strOrNull(row.status),
  });

  return {
    page: (viewer: Viewer, filter: TeamFilter, window: PageWindow): PagedQuery<Team> =>
      paged(
        'teams.page',
        {
          select,
          from: sql`${teams.name} ${sql.where(
            filter.nameContains
              ? sql`UPPER(${name}) LIKE ${sql.bind('name_pattern', containsPattern(filter.nameContains))} ESCAPE '\\'`
              : undefined,
            ownedBy(catalog, teams, ['OWNER'], filter.owner, 'owner')('OWNER'),
            mine(viewer)('OWNER'),
          )}`,
          orderBy: order,
          count: 'teams.count',
        },
        window,
        toTeam,
      ),
    /** Every visible team name, for the "did you mean" of an unknown name (a rare path). */
    names: (viewer: Viewer) =>
      query(
        'teams.names',
        sql`SELECT DISTINCT ${name} AS TEAM_NAME FROM ${teams.name}
         ${sql.where(mine(viewer)('OWNER'))} ORDER BY TEAM_NAME`,
        (row) => str(row.teamName),
      ),
    byNames: (viewer: Viewer) => (names: Fragment) =>
      query(
        'teams.byNames',
        sql`SELECT ${select} FROM ${teams.name}
         ${sql.where(sql`${name} IN (${names})`, mine(viewer)('OWNER'))} ORDER BY ${order}`,
        toTeam,
      ),
    toolsByTeams: (viewer: Viewer) => (names: Fragment) =>
      query(
        'teams.tools',
        sql`SELECT ta.${name} AS TEAM_NAME, m.AGENT_NAME, m.TASK_NAME, tl.TOOL_NAME,
           ${catalog.columns.toolId ? `tl.${catalog.columns.toolId}` : 'NULL'} AS TOOL_ID,
           ${ownerColumn(catalog.tools) ? 'tl.OWNER' : 'NULL'} AS OWNER,
           ins.ATTRIBUTE_VALUE AS INSTRUCTION, typ.ATTRIBUTE_VALUE AS TOOL_TYPE
         FROM ${catalog.teamAttributes.name} ta
         CROSS JOIN JSON_TABLE(ta.ATTRIBUTE_VALUE, '$[*]' COLUMNS (
           MEMBER_ORDER FOR ORDINALITY, AGENT_NAME VARCHAR2(128) PATH '$.name',
           TASK_NAME VARCHAR2(128) PATH '$.task')) m
         JOIN ${catalog.taskAttributes.name} ka
           ON ka.TASK_NAME IN (m.TASK_NAME, UPPER(m.TASK_NAME)) AND ka.ATTRIBUTE_NAME = 'tools' ${sameOwner(catalog.taskAttributes, 'ka', 'ta')}
         CROSS JOIN JSON_TABLE(ka.ATTRIBUTE_VALUE, '$[*]' COLUMNS (
           TOOL_ORDER FOR ORDINALITY, TOOL_NAME VARCHAR2(128) PATH '$')) kt
         JOIN ${catalog.tools.name} tl ON tl.TOOL_NAME IN (kt.TOOL_NAME, UPPER(kt.TOOL_NAME)) ${sameOwner(catalog.tools, 'tl', 'ta')}
         LEFT JOIN ${toolAttr.name} ins
           ON ins.TOOL_NAME = tl.TOOL_NAME AND ins.ATTRIBUTE_NAME = 'instruction' ${sameOwner(toolAttr, 'ins', 'tl')}
         LEFT JOIN ${toolAttr.name} typ ON ${toolTypeOf(catalog, 'typ', 'tl.TOOL_NAME', 'tl.OWNER')}
         ${sql.where("ta.ATTRIBUTE_NAME = 'agents'", sql`ta.${name} IN (${names})`, mine(viewer)('ta.OWNER'))}
         ORDER BY ta.${name}, m.MEMBER_ORDER, kt.TOOL_ORDER`,
        (row): TeamTool => ({
          teamName: str(row.teamName),
          toolId: strOrNull(row.toolId),
          name: str(row.toolName),
          owner: strOrNull(row.owner) ?? catalog.sessionUser,
          instruction: strOrNull(row.instruction),
          toolType: strOrNull(row.toolType),
          agentName: strOrNull(row.agentName),
          taskName: strOrNull(row.taskName),
        }),
      ),
    statsByTeams: (viewer: Viewer) => (names: Fragment) => {
      const history = catalog.teamHistory.name;
      const byState = (state: string) =>
        `SUM(CASE WHEN h.STATE = '${state}' THEN 1 ELSE 0 END) AS ${state}`;
      const ofTeams = [sql`h.TEAM_NAME IN (${names})`, mine(viewer)('h.TEAM_OWNER')];
      return query(
        'teams.stats',
        sql`SELECT r.*, w.HUMAN_WAIT_COUNT, w.HUMAN_WAIT_TOTAL_MS, w.HUMAN_WAIT_AVG_MS
         FROM (
           SELECT h.TEAM_NAME, COUNT(*) AS RUN_COUNT,
             ${TEAM_RUN_STATES.map(byState).join(', ')},
             1.0 * SUM(CASE WHEN h.STATE = 'SUCCEEDED' THEN 1 ELSE 0 END)
               / NULLIF(SUM(CASE WHEN h.STATE IN ('SUCCEEDED', 'FAILED') THEN 1 ELSE 0 END), 0) AS SUCCESS_RATE,
             PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY ${durationMsExpression('h')}) AS DURATION_P50_MS,
             PERCENTILE_CONT(0.95) WITHIN GROUP (ORDER BY ${durationMsExpression('h')}) AS DURATION_P95_MS
           FROM ${history} h ${sql.where(...ofTeams)}
           GROUP BY h.TEAM_NAME
         ) r
         LEFT JOIN (
           SELECT h.TEAM_NAME, COUNT(*) AS HUMAN_WAIT_COUNT,
             SUM(${durationMsExpression('c')}) AS HUMAN_WAIT_TOTAL_MS,
             AVG(${durationMsExpression('c')}) AS HUMAN_WAIT_AVG_MS
           FROM ${catalog.toolHistory.name} c
           JOIN ${history} h ON h.TEAM_EXEC_ID = c.TEAM_EXEC_ID
           ${humanToolCalls(catalog, 'c')}
           ${sql.where(...ofTeams, 'c.END_DATE IS NOT NULL')}
           GROUP BY h.TEAM_NAME
         ) w ON w.TEAM_NAME = r.TEAM_NAME`,
        toStats,
      );
    },
  };
});

function byState(read: (state: TeamRunState) => number): Record<TeamRunState, number> {
  return Object.fromEntries(TEAM_RUN_STATES.map((s) => [s, read(s)])) as Record<
    TeamRunState,
    number
  >;
}

function toStats(row: Row): TeamStats {
  const runsByState = byState((state) =>
    num(row[state.toLowerCase().replace(/_([a-z])/g, (_, c) => c.toUpperCase())]),
  );
  return {
    teamName: str(row.teamName),
    runCount: num(row.runCount),
    runsByState,
    successRate: roundedOrNull(row.successRate, 3),
    durationP50Ms: roundedOrNull(row.durationP50Ms, 1),
    durationP95Ms: roundedOrNull(row.durationP95Ms, 1),
    humanWaitCount: num(row.humanWaitCount),
    humanWaitTotalMs: numOrNull(row.humanWaitTotalMs),
    humanWaitAvgMs: roundedOrNull(row.humanWaitAvgMs, 1),
  };
}

/** What a team without visible runs reports. */
export function emptyStats(teamName: string): TeamStats {
  return {
    teamName,
    runCount: 0,
    runsByState: byState(() => 0),
    successRate: null,
    durationP50Ms: null,
    durationP95Ms: null,
    humanWaitCount: 0,
    humanWaitTotalMs: null,
    humanWaitAvgMs: null,
  };
}
