import type { Catalog } from '../catalog.js';
import type { Row } from '../driver.js';
import { dateOrNull, str, strOrNull } from '../rows.js';
import { sql } from './fragment.js';
import { perCatalog, query } from './query.js';

/**
 * What start-up and `npm run oracle:check` read about the session, in SQL that both databases
 * run: the embedded database emulates DUAL, SYS_CONTEXT and PRODUCT_COMPONENT_VERSION
 * (src/db/embedded/plsql.ts) as it emulates DESCRIBE_AGENT.
 */
export interface SessionInfo {
  /**
   * SESSION_USER: the owner of every row of a USER_ view. ORACLE_USER is not it for a quoted
   * lower-case name or a proxy login (`user[schema]`).
   */
  readonly sessionUser: string;
  /** CURRENT_SCHEMA: where unqualified names (the views, DBMS_AI_AGENT) resolve first. */
  readonly currentSchema: string;
  /** The session time zone as an offset (`+00:00`): what zoned dates are compared in. */
  readonly timeZoneOffset: string;
}

export const sessionQuery = query(
  'session.user',
  sql`SELECT SYS_CONTEXT('USERENV', 'SESSION_USER') AS USER_NAME,
    SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') AS SCHEMA_NAME,
    TO_CHAR(CURRENT_TIMESTAMP, 'TZH:TZM') AS TIME_ZONE_OFFSET
    FROM DUAL`,
  (row: Row): SessionInfo => ({
    sessionUser: str(row.userName),
    currentSchema: str(row.schemaName),
    timeZoneOffset: str(row.timeZoneOffset),
  }),
);

/** PRODUCT_COMPONENT_VERSION is public; VERSION_FULL exists from 18c (19.29 → `19.29.0.0.0`). */
export const versionQuery = query(
  'session.version',
  sql`SELECT PRODUCT, VERSION_FULL FROM PRODUCT_COMPONENT_VERSION ORDER BY PRODUCT`,
  (row: Row) => `${str(row.product)} ${strOrNull(row.versionFull) ?? ''}`.trim(),
);

/**
 * One row through queryWithAgentDetails: a driver that cannot compile the DESCRIBE_AGENT
 * wrapper fails here, at start-up, instead of on the first list of agents.
 */
export const describeAgentProbe = query(
  'agents.describeProbe',
  sql`SELECT CAST(NULL AS VARCHAR(128)) AS OWNER, CAST(NULL AS VARCHAR(128)) AS AGENT_NAME FROM DUAL`,
  (row: Row) => strOrNull(row.agentDetails),
  { agentDetails: true, orderedBy: ['AGENT_NAME'] },
);

/** The database's own time zones and the newest run's start, for `npm run oracle:check`. */
export interface TimeZones {
  /** DBTIMEZONE: the zone of TIMESTAMP WITH LOCAL TIME ZONE data. */
  readonly databaseZone: string;
  /** SYSTIMESTAMP's offset: the database server's operating-system clock. */
  readonly serverOffset: string;
  /** SYS_EXTRACT_UTC(SYSTIMESTAMP): now, in UTC. */
  readonly nowUtc: Date | null;
  /** The newest START_DATE of the team history, read as the UTC wall clock it should be. */
  readonly newestStart: Date | null;
}

export const timeZoneQuery = perCatalog((catalog: Catalog) =>
  query(
    'session.timeZone',
    sql`SELECT DBTIMEZONE AS DB_TIME_ZONE, TO_CHAR(SYSTIMESTAMP, 'TZH:TZM') AS SERVER_OFFSET,
      SYS_EXTRACT_UTC(SYSTIMESTAMP) AS NOW_UTC,
      ${catalog.teamHistory.columns ? sql`(SELECT MAX(h.START_DATE) FROM ${sql.identifier(catalog, catalog.teamHistory)} h)` : sql`NULL`} AS NEWEST_START
      FROM DUAL`,
    (row: Row): TimeZones => ({
      databaseZone: str(row.dbTimeZone),
      serverOffset: str(row.serverOffset),
      nowUtc: dateOrNull(row.nowUtc),
      newestStart: dateOrNull(row.newestStart),
    }),
  ),
);
