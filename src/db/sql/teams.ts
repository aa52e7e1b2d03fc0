import {
  TEAM_RUN_STATES,
  type Team,
  type TeamFilter,
  type TeamRunState,
  type TeamStats,
  type TeamTool,
  teamKey,
} from '../../model/team.js';
import type { Viewer } from '../../model/viewer.js';
import { type Catalog, ownerColumn, type ViewInfo } from '../catalog.js';
import type { Row } from '../driver.js';
import { num, numOrNull, roundedOrNull, str, strOrNull } from '../rows.js';
import { type Fragment, sql } from './fragment.js';
import type { JsonList } from './json-lists.js';
import { ownedBy, viewerOwns } from './owners.js';
import { type PagedQuery, type PageWindow, paged } from './pages.js';
import { perCatalog, query } from './query.js';
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
function sameOwner(view: ViewInfo, a: Fragment, b: Fragment): Fragment {
  return ownerColumn(view) ? sql`AND ${a}.OWNER = ${b}.OWNER` : sql``;
}

/** `%text%` for LIKE, with LIKE's own wildcards in the text matched literally. */
export function containsPattern(text: string): string {
  return `%${text.toUpperCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The tool_type attribute of a tool: its row of `alias`, matched on name (and owner). */
function toolTypeOf(
  catalog: Catalog,
  alias: Fragment,
  tool: Fragment,
  toolOwner: Fragment,
): Fragment {
  return sql`${alias}.TOOL_NAME = ${tool} AND ${alias}.ATTRIBUTE_NAME = 'tool_type' ${
    ownerColumn(catalog.toolAttributes) ? sql`AND ${alias}.OWNER = ${toolOwner}` : sql``
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
export function humanToolCalls(catalog: Catalog, call: Fragment): Fragment {
  const toolOwner = ownerColumn(catalog.toolHistory, ['TOOL_OWNER'])
    ? sql`${call}.TOOL_OWNER`
    : sql`NULL`;
  // The CLOB's first characters, whatever its length (a CAST to VARCHAR raises ORA-22835 on
  // a long value, an instruction, if Oracle evaluates it before the ATTRIBUTE_NAME filter),
  // compared upper-cased: `human` is a HUMAN tool too.
  return sql`JOIN ${sql.identifier(catalog, catalog.toolAttributes)} typ ON ${toolTypeOf(catalog, sql`typ`, sql`${call}.TOOL_NAME`, toolOwner)}
    AND UPPER(TRIM(DBMS_LOB.SUBSTR(typ.ATTRIBUTE_VALUE, 30, 1))) = 'HUMAN'`;
}

export const teamSql = perCatalog((catalog: Catalog) => {
  const teams = catalog.teams;
  const teamsView = sql.identifier(catalog, teams);
  const name = sql.identifier(catalog, teams, catalog.columns.teamName);
  /** The team's name in the team attributes, as the teams view names it. */
  const attributeName = sql.identifier(catalog, catalog.teamAttributes, catalog.columns.teamName);
  const owner = ownerColumn(teams);
  const runOwner = ownerColumn(catalog.teamHistory, ['TEAM_OWNER']);
  const selectItems = [
    owner ? sql`OWNER` : sql`NULL AS OWNER`,
    sql`${name} AS TEAM_NAME`,
    sql`DESCRIPTION`,
    teams.columns?.has('STATUS') ? sql`STATUS` : sql`NULL AS STATUS`,
  ];
  const select = sql.join(selectItems, ', ');
  const order = sql`${name}${owner ? sql`, OWNER` : sql``}`;
  const toolAttr = sql.identifier(catalog, catalog.toolAttributes);
  /** The teams view decides what a viewer sees of every team statement. */
  const mine = (viewer: Viewer) => viewerOwns(catalog, teams, viewer);
  const toTeam = (row: Row): Team => {
    const name = str(row.teamName);
    const teamOwner = strOrNull(row.owner) ?? catalog.sessionUser;
    return {
      id: owner ? teamKey(teamOwner, name) : name,
      name,
      owner: teamOwner,
      description: strOrNull(row.description),
      status: strOrNull(row.status),
    };
  };
  /** The team attributes' owner, the team's: a team's tools are its owner's. */
  const attributesOwner = ownerColumn(catalog.teamAttributes);

  return {
    /**
     * The teams named by `names` (a subquery of another statement: a run's TEAM_NAME), as
     * byNames reads them, as a JSON list of a planned statement (src/db/sql/history-plan.ts).
     */
    namedList: (viewer: Viewer, names: Fragment): JsonList<Team> => ({
      parts: {
        select: selectItems,
        from: sql`${teamsView} ${sql.where(sql`${name} IN (${names})`, mine(viewer)('OWNER'))}`,
        orderBy: owner ? ['TEAM_NAME', 'OWNER'] : ['TEAM_NAME'],
        // An owner's teams have distinct names.
        totalOrder: true,
      },
      decode: toTeam,
    }),
    page: (viewer: Viewer, filter: TeamFilter, window: PageWindow): PagedQuery<Team> =>
      paged(
        'teams.page',
        {
          select,
          from: sql`${teamsView} ${sql.where(
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
        sql`SELECT DISTINCT ${name} AS TEAM_NAME FROM ${teamsView}
         ${sql.where(mine(viewer)('OWNER'))} ORDER BY TEAM_NAME`,
        (row) => str(row.teamName),
      ),
    byNames: (viewer: Viewer) => (names: Fragment) =>
      query(
        'teams.byNames',
        sql`SELECT ${select} FROM ${teamsView}
         ${sql.where(sql`${name} IN (${names})`, mine(viewer)('OWNER'))} ORDER BY ${order}`,
        toTeam,
      ),
    toolsByTeams: (viewer: Viewer) => (names: Fragment) =>
      query(
        'teams.tools',
        sql`SELECT ta.${attributeName} AS TEAM_NAME, ${attributesOwner ? sql`ta.OWNER AS TEAM_OWNER, ` : sql``}m.AGENT_NAME, m.TASK_NAME, tl.TOOL_NAME,
           ${catalog.columns.toolId ? sql`tl.${sql.identifier(catalog, catalog.tools, catalog.columns.toolId)}` : sql`NULL`} AS TOOL_ID,
           ${ownerColumn(catalog.tools) ? sql`tl.OWNER` : sql`NULL`} AS OWNER,
           ins.ATTRIBUTE_VALUE AS INSTRUCTION, typ.ATTRIBUTE_VALUE AS TOOL_TYPE
         FROM ${sql.identifier(catalog, catalog.teamAttributes)} ta
         CROSS JOIN JSON_TABLE(ta.ATTRIBUTE_VALUE, '$[*]' COLUMNS (
           MEMBER_ORDER FOR ORDINALITY, AGENT_NAME VARCHAR2(128) PATH '$.name',
           TASK_NAME VARCHAR2(128) PATH '$.task')) m
         JOIN ${sql.identifier(catalog, catalog.taskAttributes)} ka
           ON ka.TASK_NAME IN (m.TASK_NAME, UPPER(m.TASK_NAME)) AND ka.ATTRIBUTE_NAME = 'tools' ${sameOwner(catalog.taskAttributes, sql`ka`, sql`ta`)}
         CROSS JOIN JSON_TABLE(ka.ATTRIBUTE_VALUE, '$[*]' COLUMNS (
           TOOL_ORDER FOR ORDINALITY, TOOL_NAME VARCHAR2(128) PATH '$')) kt
         JOIN ${sql.identifier(catalog, catalog.tools)} tl ON tl.TOOL_NAME IN (kt.TOOL_NAME, UPPER(kt.TOOL_NAME)) ${sameOwner(catalog.tools, sql`tl`, sql`ta`)}
         LEFT JOIN ${toolAttr} ins
           ON ins.TOOL_NAME = tl.TOOL_NAME AND ins.ATTRIBUTE_NAME = 'instruction' ${sameOwner(catalog.toolAttributes, sql`ins`, sql`tl`)}
         LEFT JOIN ${toolAttr} typ ON ${toolTypeOf(catalog, sql`typ`, sql`tl.TOOL_NAME`, sql`tl.OWNER`)}
         ${sql.where(sql`ta.ATTRIBUTE_NAME = 'agents'`, sql`ta.${attributeName} IN (${names})`, mine(viewer)('ta.OWNER'))}
         ORDER BY ta.${attributeName}, ${attributesOwner ? sql`ta.OWNER, ` : sql``}m.MEMBER_ORDER, kt.TOOL_ORDER`,
        (row): TeamTool => ({
          teamName: str(row.teamName),
          teamOwner: strOrNull(row.teamOwner) ?? catalog.sessionUser,
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
      const history = sql.identifier(catalog, catalog.teamHistory);
      const byState = (state: TeamRunState) =>
        sql`SUM(CASE WHEN h.STATE = '${sql.raw(state)}' THEN 1 ELSE 0 END) AS ${sql.raw(state)}`;
      const ofTeams = [sql`h.TEAM_NAME IN (${names})`, mine(viewer)('h.TEAM_OWNER')];
      // Per owner and name where the history names owners (DBA_): two owners' teams of one
      // name are two teams.
      const team = runOwner ? sql`h.TEAM_OWNER, h.TEAM_NAME` : sql`h.TEAM_NAME`;
      const sameTeam = runOwner
        ? sql`w.TEAM_OWNER = r.TEAM_OWNER AND w.TEAM_NAME = r.TEAM_NAME`
        : sql`w.TEAM_NAME = r.TEAM_NAME`;
      return query(
        'teams.stats',
        sql`SELECT r.*, w.HUMAN_WAIT_COUNT, w.HUMAN_WAIT_TOTAL_MS, w.HUMAN_WAIT_AVG_MS
         FROM (
           SELECT ${team}, COUNT(*) AS RUN_COUNT,
             ${sql.join(TEAM_RUN_STATES.map(byState), ', ')},
             1.0 * SUM(CASE WHEN h.STATE = 'SUCCEEDED' THEN 1 ELSE 0 END)
               / NULLIF(SUM(CASE WHEN h.STATE IN ('SUCCEEDED', 'FAILED') THEN 1 ELSE 0 END), 0) AS SUCCESS_RATE,
             PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY ${durationMsExpression(sql`h`)}) AS DURATION_P50_MS,
             PERCENTILE_CONT(0.95) WITHIN GROUP (ORDER BY ${durationMsExpression(sql`h`)}) AS DURATION_P95_MS
           FROM ${history} h ${sql.where(...ofTeams)}
           GROUP BY ${team}
         ) r
         LEFT JOIN (
           SELECT ${team}, COUNT(*) AS HUMAN_WAIT_COUNT,
             SUM(${durationMsExpression(sql`c`)}) AS HUMAN_WAIT_TOTAL_MS,
             AVG(${durationMsExpression(sql`c`)}) AS HUMAN_WAIT_AVG_MS
           FROM ${sql.identifier(catalog, catalog.toolHistory)} c
           JOIN ${history} h ON h.TEAM_EXEC_ID = c.TEAM_EXEC_ID
           ${humanToolCalls(catalog, sql`c`)}
           ${sql.where(...ofTeams, sql`c.END_DATE IS NOT NULL`)}
           GROUP BY ${team}
         ) w ON ${sameTeam}`,
        (row) => toStats(row, catalog.sessionUser),
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

function toStats(row: Row, sessionUser: string): TeamStats {
  const runsByState = byState((state) =>
    num(row[state.toLowerCase().replace(/_([a-z])/g, (_, c) => c.toUpperCase())]),
  );
  return {
    teamName: str(row.teamName),
    teamOwner: strOrNull(row.teamOwner) ?? sessionUser,
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
export function emptyStats(teamName: string, teamOwner: string): TeamStats {
  return {
    teamName,
    teamOwner,
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
