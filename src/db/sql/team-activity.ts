import {
  ACTIVITY_EVENTS,
  type ActivityBucket,
  type ActivityEventGroup,
  type ActivityFilter,
  type ActivityWindow,
} from '../../model/activity.js';
import { TEAM_RUN_STATES, type TeamRunState } from '../../model/team.js';
import type { Viewer } from '../../model/viewer.js';
import type { Catalog } from '../catalog.js';
import type { Row } from '../driver.js';
import { camelCase, dateOrNull, num, roundedOrNull } from '../rows.js';
import { type Fragment, sql } from './fragment.js';
import { ownedBy, viewerOwns } from './owners.js';
import { perCatalog, type Query, query } from './query.js';
import { durationMsExpression } from './team-history.js';
import { humanToolCalls, humanWaitsReadable } from './teams.js';

/**
 * Oracle's TRUNC(date, format) for each bucket: the hour or the day an instant falls in. The
 * embedded database has the same function (emb_oracle.trunc, plsql.ts), so the text is one.
 */
const TRUNC_FORMAT: Readonly<Record<ActivityBucket, 'HH' | 'DD'>> = { HOUR: 'HH', DAY: 'DD' };

/**
 * teamRunActivity in one statement: every event that falls in the window (a run started or
 * ended, a wait for a person began or was answered, a wait already open at the window's
 * start), bucketed with TRUNC and counted per kind and bucket. The branches read the history
 * by START_DATE or END_DATE ranges; the grouping is over the events, not over a bucket series,
 * so no row source of N buckets is needed (Oracle's CONNECT BY and PostgreSQL's
 * generate_series have no common form) and empty buckets are filled in by activityBuckets.
 */
export const teamActivitySql = perCatalog((catalog: Catalog) => {
  const runs = sql.identifier(catalog, catalog.teamHistory);
  const calls = sql.identifier(catalog, catalog.toolHistory);
  const waitsReadable = humanWaitsReadable(catalog);

  return {
    waitsReadable,
    activity(
      viewer: Viewer,
      filter: ActivityFilter,
      window: ActivityWindow,
    ): Query<ActivityEventGroup> {
      const gridStart = sql.bind('grid_start', window.start);
      const gridEnd = sql.bind('grid_end', window.end);
      const inWindow = (column: Fragment) =>
        sql`${column} >= ${gridStart} AND ${column} < ${gridEnd}`;
      const ofRuns: (Fragment | undefined)[] = [
        filter.teamName ? sql`h.TEAM_NAME = ${sql.bind('team_name', filter.teamName)}` : undefined,
        ownedBy(
          catalog,
          catalog.teamHistory,
          ['TEAM_OWNER'],
          filter.owner,
          'owner',
        )('h.TEAM_OWNER'),
        viewerOwns(catalog, catalog.teamHistory, viewer, ['TEAM_OWNER'])('h.TEAM_OWNER'),
      ];
      const humanCalls = sql`${calls} c JOIN ${runs} h ON h.TEAM_EXEC_ID = c.TEAM_EXEC_ID
        ${humanToolCalls(catalog, sql`c`)}`;
      // An event's moment as the UTC wall clock, a TIMESTAMP in every branch: TRUNC of a
      // TIMESTAMP WITH TIME ZONE gives the DATE of the value's own zone (an offset a job or a
      // session wrote, a region with its DST), so the bucket would disagree with the window's
      // filter, which compares instants, and an event near an edge would fall outside every
      // bucket. A zone-less TIMESTAMP is taken in the session zone, +00:00, so comes back as it
      // is. One type in every branch also keeps the UNION ALL from mixing TIMESTAMP and TSTZ.
      const utc = (column: Fragment) => sql`SYS_EXTRACT_UTC(${column})`;
      const events = [
        // The first branch types the columns for the rest (PostgreSQL resolves a UNION's NULLs
        // branch by branch).
        sql`SELECT ${sql.raw(ACTIVITY_EVENTS.ENDED)} AS KIND, ${utc(sql`h.END_DATE`)} AS AT, h.STATE,
            ${durationMsExpression(sql`h`)} AS DURATION_MS
          FROM ${runs} h ${sql.where(...ofRuns, inWindow(sql`h.END_DATE`))}`,
        sql`SELECT ${sql.raw(ACTIVITY_EVENTS.STARTED)}, ${utc(sql`h.START_DATE`)}, h.STATE, NULL
          FROM ${runs} h ${sql.where(...ofRuns, inWindow(sql`h.START_DATE`))}`,
        ...(waitsReadable
          ? [
              sql`SELECT ${sql.raw(ACTIVITY_EVENTS.WAIT_BEGAN)}, ${utc(sql`c.START_DATE`)}, NULL, NULL
                FROM ${humanCalls} ${sql.where(...ofRuns, inWindow(sql`c.START_DATE`))}`,
              sql`SELECT ${sql.raw(ACTIVITY_EVENTS.WAIT_ANSWERED)}, ${utc(sql`c.END_DATE`)}, NULL, ${durationMsExpression(sql`c`)}
                FROM ${humanCalls} ${sql.where(...ofRuns, inWindow(sql`c.END_DATE`))}`,
              sql`SELECT ${sql.raw(ACTIVITY_EVENTS.WAITING_BEFORE)}, NULL, NULL, NULL
                FROM ${humanCalls} ${sql.where(
                  ...ofRuns,
                  sql`c.START_DATE < ${gridStart}`,
                  sql`(c.END_DATE IS NULL OR c.END_DATE >= ${gridStart})`,
                )}`,
            ]
          : []),
      ];
      const byState = (state: TeamRunState) =>
        sql`SUM(CASE WHEN e.STATE = '${sql.raw(state)}' THEN 1 ELSE 0 END) AS ${sql.raw(state)}`;
      return query(
        `teamRuns.activity.${window.bucket.toLowerCase()}`,
        sql`SELECT e.KIND, e.BUCKET_START, COUNT(*) AS EVENT_COUNT,
           ${sql.join(TEAM_RUN_STATES.map(byState), ', ')},
           PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY e.DURATION_MS) AS DURATION_P50_MS,
           PERCENTILE_CONT(0.95) WITHIN GROUP (ORDER BY e.DURATION_MS) AS DURATION_P95_MS,
           SUM(e.DURATION_MS) AS DURATION_TOTAL_MS
         FROM (
           SELECT x.KIND, TRUNC(x.AT, '${sql.raw(TRUNC_FORMAT[window.bucket])}') AS BUCKET_START, x.STATE, x.DURATION_MS
           FROM (${sql.join(events, ' UNION ALL ')}) x
         ) e
         GROUP BY e.KIND, e.BUCKET_START`,
        toGroup,
      );
    },
  };
});

function toGroup(row: Row): ActivityEventGroup {
  return {
    kind: num(row.kind),
    bucketStart: dateOrNull(row.bucketStart),
    count: num(row.eventCount),
    byState: Object.fromEntries(
      TEAM_RUN_STATES.map((state) => [state, num(row[camelCase(state)])]),
    ) as Record<TeamRunState, number>,
    durationP50Ms: roundedOrNull(row.durationP50Ms, 1),
    durationP95Ms: roundedOrNull(row.durationP95Ms, 1),
    durationTotalMs: roundedOrNull(row.durationTotalMs, 1),
  };
}
