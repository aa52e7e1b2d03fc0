/**
 * Which scheduler job's error is a failed task's (TaskRun.failure): a job of another team with
 * the same task name, or a job whose name matches only with `_` read as a wildcard, is not it,
 * even when it failed later in the same minutes.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { EmbeddedPg } from '../src/db/embedded/database.js';
import { embeddedPg } from './live/support.js';
import { startTestServer, type TestServer } from './support/server.js';

let t: TestServer;
let pg: EmbeddedPg;
beforeAll(async () => {
  t = await startTestServer({});
  pg = embeddedPg(t.server);
});
afterAll(() => t.stop());

interface FailedTask {
  team_exec_id: string;
  team_name: string;
  task_name: string;
  task_order: number;
  owner: string;
  job_name: string;
  log_date: Date;
  actual_start_date: Date;
}

test('a failed task’s failure is its own team’s job, named literally', async () => {
  const { rows } = await pg.query<FailedTask>(
    `SELECT t.team_exec_id, t.team_name, t.task_name, t.task_order::int AS task_order, d.owner,
       d.job_name, d.log_date, d.actual_start_date
     FROM dba_ai_agent_task_history t
     JOIN dba_scheduler_job_run_details d
       ON d.job_name = t.team_name || '$' || t.task_name AND d.owner = t.task_owner
         AND d.log_date BETWEEN t.start_date AND t.end_date
     WHERE t.state = 'FAILED' AND d.status = 'FAILED' AND t.task_name LIKE '%\\_%'
     ORDER BY t.team_exec_id LIMIT 1`,
  );
  const task = rows[0] as FailedTask;
  expect(task).toBeDefined();
  const impostors = [
    // Another team, the same task name.
    `OTHER_TEAM$${task.task_name}`,
    // The task's name with its first `_` as any character.
    `${task.team_name}$${task.task_name.replace('_', 'X')}`,
  ];
  for (const [i, jobName] of impostors.entries()) {
    await pg.query(
      `INSERT INTO dba_scheduler_job_run_details (log_id, log_date, owner, job_name, status,
         actual_start_date, additional_info)
       VALUES ($1, $2::timestamptz + interval '1 second', $3, $4, 'FAILED', $5, 'ORA-20000: not this task')`,
      [9_000_000 + i, task.log_date, task.owner, jobName, task.actual_start_date],
    );
  }
  const { data, errors } = await t.gql<{
    teamRun: {
      tasks: { taskOrder: number; failure: { jobName: string; message: string } | null }[];
    };
  }>(
    'query($id: ID!) { teamRun(execId: $id) { tasks { taskOrder failure { jobName message } } } }',
    { id: task.team_exec_id },
  );
  expect(errors).toBeUndefined();
  const failure = data?.teamRun.tasks.find((k) => k.taskOrder === task.task_order)?.failure;
  expect(failure?.jobName).toBe(task.job_name);
  expect(failure?.message).not.toContain('not this task');
});

test('a failed task without a TASK_NAME has no failure, though its team’s job failed then', async () => {
  // Oracle's || skips a NULL (the embedded database's does too): the pattern of a task without
  // a name would be '%<TEAM>%%', and the team's own job, failed in the same minutes, would
  // read as the task's failure.
  const { rows } = await pg.query<FailedTask>(
    `SELECT t.team_exec_id, t.team_name, t.task_name, t.task_order::int AS task_order, d.owner,
       d.job_name, d.log_date, d.actual_start_date
     FROM dba_ai_agent_task_history t
     JOIN dba_scheduler_job_run_details d
       ON d.job_name = t.team_name || '$' || t.task_name AND d.owner = t.task_owner
         AND d.log_date BETWEEN t.start_date AND t.end_date
     WHERE t.state = 'FAILED' AND d.status = 'FAILED'
     ORDER BY t.team_exec_id DESC LIMIT 1`,
  );
  const task = rows[0] as FailedTask;
  expect(task).toBeDefined();
  const { rows: concatenated } = await pg.query<{ pattern: string | null }>(
    `SELECT '%' || $1::text || '%' || NULL::text || '%' AS pattern`,
    [task.team_name],
  );
  expect(concatenated[0]?.pattern).toBe(`%${task.team_name}%%`);
  await pg.query(
    `UPDATE dba_ai_agent_task_history SET task_name = NULL
     WHERE team_exec_id = $1 AND task_order = $2 AND state = 'FAILED'`,
    [task.team_exec_id, task.task_order],
  );
  await pg.query(
    `INSERT INTO dba_scheduler_job_run_details (log_id, log_date, owner, job_name, status,
       actual_start_date, additional_info)
     VALUES ($1, $2, $3, $4, 'FAILED', $5, 'ORA-20000: the team job, not this task')`,
    [9_100_000, task.log_date, task.owner, task.team_name, task.actual_start_date],
  );
  const { data, errors } = await t.gql<{
    teamRun: { tasks: { taskOrder: number; taskName: string | null; failure: unknown }[] };
  }>(
    'query($id: ID!) { teamRun(execId: $id) { tasks { taskOrder taskName failure { jobName } } } }',
    { id: task.team_exec_id },
  );
  expect(errors).toBeUndefined();
  const unnamed = data?.teamRun.tasks.filter((k) => k.taskOrder === task.task_order);
  expect(unnamed?.map((k) => [k.taskName, k.failure])).toEqual([[null, null]]);
});
