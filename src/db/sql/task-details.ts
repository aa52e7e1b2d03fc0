import type { LlmPrompt, TaskFailure } from '../../model/team.js';
import type { Viewer } from '../../model/viewer.js';
import { type Catalog, ownerColumn } from '../catalog.js';
import { dateOrNull, num, str, strOrNull } from '../rows.js';
import { type Fragment, sql } from './fragment.js';
import { viewerOwns } from './owners.js';
import type { PageWindow } from './pages.js';
import { perCatalog, query } from './query.js';
import { teamHistorySql } from './team-history.js';

/** A conversation's prompts in the window, plus its first (which carries the total). */
export interface WindowedPrompt {
  readonly prompt: LlmPrompt;
  readonly rowNumber: number;
  readonly totalCount: number;
}

/**
 * What the history views leave out about a task: why it failed (the scheduler job that ran
 * it, USER_/DBA_SCHEDULER_JOB_RUN_DETAILS.ADDITIONAL_INFO) and what its LLM was asked
 * (USER_/DBA_CLOUD_AI_CONVERSATION_PROMPTS, by the task's conversation_id).
 *
 * Which job ran a task is not documented. Assumed (docs/oracle.md): its JOB_NAME contains
 * the TEAM_NAME and then the TASK_NAME (literally: `_` is no wildcard), and it started and
 * was logged within a minute of the task's START_DATE and END_DATE; the latest failed such
 * run is the task's failure. A failure is
 * visible when its run is (team-history's runVisible).
 */
export const taskDetailsSql = perCatalog((catalog: Catalog) => {
  const history = teamHistorySql(catalog);
  const tasks = catalog.taskHistory;
  const jobs = catalog.jobRunDetails;
  const prompts = catalog.conversationPrompts;
  const sameOwner =
    ownerColumn(jobs) && ownerColumn(tasks, ['TASK_OWNER'])
      ? sql`AND d.OWNER = t.TASK_OWNER`
      : sql``;
  /** A name as a LIKE pattern matching it literally (its `_` and `%` are not wildcards). */
  const literally = (name: Fragment) =>
    sql`REPLACE(REPLACE(REPLACE(${name}, '\\', '\\\\'), '_', '\\_'), '%', '\\%')`;
  // The team's name and then the task's in the job name; the job logged (LOG_DATE, the
  // scheduler log's own order) and started within the task's time, so that the log is read
  // over the task's time only. A name that is not there (seed 003: TASK_NAME is nullable)
  // matches no job: Oracle's || skips a NULL, so the pattern would be '%<TEAM>%%', every
  // failed job of the team in those minutes (the embedded database's || does the same).
  const jobOfTask = sql`t.TEAM_NAME IS NOT NULL AND t.TASK_NAME IS NOT NULL
    AND d.JOB_NAME LIKE '%' || ${literally(sql`t.TEAM_NAME`)} || '%' || ${literally(sql`t.TASK_NAME`)} || '%' ESCAPE '\\' ${sameOwner}
    AND d.LOG_DATE >= t.START_DATE - INTERVAL '1' MINUTE
    AND (t.END_DATE IS NULL OR d.LOG_DATE <= t.END_DATE + INTERVAL '1' MINUTE)
    AND d.ACTUAL_START_DATE >= t.START_DATE - INTERVAL '1' MINUTE
    AND (t.END_DATE IS NULL OR d.ACTUAL_START_DATE <= t.END_DATE + INTERVAL '1' MINUTE)`;

  return {
    failuresByRuns: (viewer: Viewer) => (ids: Fragment) =>
      query(
        'taskFailures.byRuns',
        sql`SELECT t.TEAM_EXEC_ID, t.TASK_ORDER, d.JOB_NAME, d.STATUS, d.ACTUAL_START_DATE,
           d.LOG_DATE, d.ADDITIONAL_INFO
         FROM ${sql.identifier(catalog, tasks)} t JOIN ${sql.identifier(catalog, jobs)} d ON ${jobOfTask}
         ${sql.where(
           sql`t.TEAM_EXEC_ID IN (${ids})`,
           sql`t.STATE = 'FAILED'`,
           sql`d.STATUS = 'FAILED'`,
           history.runVisible(viewer, sql`t`),
         )}
         ORDER BY t.TEAM_EXEC_ID, t.TASK_ORDER, d.LOG_DATE DESC`,
        (row): TaskFailure => ({
          teamExecId: str(row.teamExecId),
          taskOrder: num(row.taskOrder),
          jobName: str(row.jobName),
          status: strOrNull(row.status),
          startDate: dateOrNull(row.actualStartDate),
          logDate: dateOrNull(row.logDate),
          additionalInfo: strOrNull(row.additionalInfo),
        }),
      ),
    /** A window of each conversation's prompts in CREATED order: one statement for many. */
    promptsByConversations: (viewer: Viewer, window: PageWindow) => (ids: Fragment) =>
      query(
        'conversationPrompts.byConversations',
        sql`SELECT * FROM (
           SELECT p.CONVERSATION_ID, p.PROMPT, p.PROMPT_RESPONSE, p.CREATED,
             ROW_NUMBER() OVER (PARTITION BY p.CONVERSATION_ID ORDER BY p.CREATED) AS RN,
             COUNT(*) OVER (PARTITION BY p.CONVERSATION_ID) AS TOTAL_COUNT
           FROM ${sql.identifier(catalog, prompts)} p
           ${sql.where(sql`p.CONVERSATION_ID IN (${ids})`, viewerOwns(catalog, prompts, viewer)('p.OWNER'))}
         ) w
         WHERE (w.RN > ${sql.bind('page_offset', window.offset)} AND w.RN <= ${sql.bind('page_end', window.offset + window.limit)}) OR w.RN = 1
         ORDER BY w.CONVERSATION_ID, w.RN`,
        (row): WindowedPrompt => ({
          prompt: {
            conversationId: str(row.conversationId),
            prompt: strOrNull(row.prompt),
            response: strOrNull(row.promptResponse),
            created: dateOrNull(row.created),
          },
          rowNumber: num(row.rn),
          totalCount: num(row.totalCount),
        }),
      ),
  };
});
