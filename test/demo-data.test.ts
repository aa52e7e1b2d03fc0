import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { type EmbeddedDatabase, openEmbeddedDatabase } from '../src/db/embedded/database.js';
import { DEMO_PRESENT, demoData } from '../src/db/embedded/demo-data.js';

// The demo history as a person reads it in the console: every tool call inside its task,
// every task inside its run, waits for a person where the states say so, and recent.
type Row = Record<string, unknown>;
const data = demoData();
const rows = (table: string) => (data[table] ?? []) as Row[];
const ms = (value: unknown) => (value === null ? null : Date.parse(String(value)));
const runs = rows('dba_ai_agent_team_history');
const tasks = rows('dba_ai_agent_task_history');
const calls = rows('dba_ai_agent_tool_history');
const humanTools = new Set(
  rows('dba_ai_agent_tool_attributes')
    .filter((a) => a.attribute_name === 'tool_type' && a.attribute_value === 'HUMAN')
    .map((a) => `${a.owner}.${a.tool_name}`),
);
const isHuman = (call: Row) => humanTools.has(`${call.tool_owner}.${call.tool_name}`);
const runOf = new Map(runs.map((run) => [run.team_exec_id, run]));
const taskKey = (row: Row) => `${row.team_exec_id}#${row.task_order}`;
const taskOf = new Map(tasks.map((task) => [taskKey(task), task]));
const tasksOfRun = (run: Row) => tasks.filter((task) => task.team_exec_id === run.team_exec_id);
const callsOfRun = (run: Row) => calls.filter((call) => call.team_exec_id === run.team_exec_id);

/** `inner` lies within `outer`: starts no earlier, and ends no later once `outer` has ended. */
function within(inner: Row, outer: Row): string | null {
  const [start, end, outerStart, outerEnd] = [
    ms(inner.start_date),
    ms(inner.end_date),
    ms(outer.start_date),
    ms(outer.end_date),
  ];
  if (start === null || outerStart === null) return 'has no start';
  if (start < outerStart) return `starts ${outerStart - start} ms before`;
  if (outerEnd === null) return null;
  if (end === null) return 'is still open after the end of';
  return end > outerEnd ? `ends ${end - outerEnd} ms after` : null;
}

describe('the demo history (every row of demoData())', () => {
  test('has runs, tasks and tool calls of every team in all five states', () => {
    expect(runs.length).toBeGreaterThan(250);
    expect(new Set(runs.map((run) => run.state))).toEqual(
      new Set(['RUNNING', 'WAITING_FOR_HUMAN', 'RESUMING', 'SUCCEEDED', 'FAILED']),
    );
    expect(calls.length).toBeGreaterThan(runs.length);
  });

  test('every tool call lies inside its task, every task inside its run', () => {
    const problems: string[] = [];
    for (const call of calls) {
      const task = taskOf.get(taskKey(call));
      if (!task) problems.push(`call ${call.invocation_id} has no task`);
      else {
        const wrong = within(call, task);
        if (wrong) problems.push(`call ${call.invocation_id} ${wrong} task ${taskKey(task)}`);
      }
    }
    for (const task of tasks) {
      const run = runOf.get(task.team_exec_id);
      if (!run) problems.push(`task ${taskKey(task)} has no run`);
      else {
        const wrong = within(task, run);
        if (wrong) problems.push(`task ${taskKey(task)} ${wrong} its run`);
      }
    }
    expect(problems).toEqual([]);
  });

  test('a run waits for a person exactly when one HUMAN call of its waiting last task is open', () => {
    const problems: string[] = [];
    for (const run of runs) {
      const open = callsOfRun(run).filter((call) => call.end_date === null);
      const last = tasksOfRun(run).at(-1);
      const waitingTasks = tasksOfRun(run).filter((task) => task.state === 'WAITING_FOR_HUMAN');
      const id = run.team_exec_id;
      if (run.state === 'WAITING_FOR_HUMAN') {
        if (open.length !== 1 || !open[0] || !isHuman(open[0]))
          problems.push(`${id} waits without one open HUMAN call`);
        else if (!last || open[0].task_order !== last.task_order)
          problems.push(`${id} waits on a call outside its last task`);
        if (last?.state !== 'WAITING_FOR_HUMAN') problems.push(`${id}: last task not waiting`);
      } else {
        if (open.some(isHuman)) problems.push(`${id} is ${run.state} with an open HUMAN call`);
        if (waitingTasks.length > 0) problems.push(`${id} is ${run.state} with a waiting task`);
      }
      if (run.end_date !== null && open.length > 0) problems.push(`${id} ended with open calls`);
      if (run.state === 'RESUMING') {
        const answered = callsOfRun(run).filter(isHuman).at(-1);
        if (!answered || answered.end_date === null)
          problems.push(`${id} resumes without an answered HUMAN call`);
      }
    }
    expect(problems).toEqual([]);
  });

  test('the history ends before DEMO_PRESENT, busy in its last day, its unfinished runs recent', () => {
    const dates = [...runs, ...tasks, ...calls].flatMap((row) =>
      [ms(row.start_date), ms(row.end_date)].filter((d): d is number => d !== null),
    );
    expect(Math.max(...dates)).toBeLessThanOrEqual(DEMO_PRESENT);
    const day = 24 * 3600 * 1000;
    const lastDay = runs.filter((run) => (ms(run.start_date) ?? 0) > DEMO_PRESENT - day);
    expect(lastDay.length).toBeGreaterThan(40);
    expect(Math.min(...runs.map((run) => ms(run.start_date) ?? 0))).toBeGreaterThan(
      DEMO_PRESENT - 31 * day,
    );
    // A person opening the console sees waits of minutes or hours, not of weeks.
    const waitingSince = runs
      .filter((run) => run.state === 'WAITING_FOR_HUMAN')
      .map((run) => callsOfRun(run).find((call) => call.end_date === null))
      .map((call) => ms(call?.start_date) ?? 0);
    expect(waitingSince.length).toBeGreaterThan(0);
    for (const since of waitingSince) expect(DEMO_PRESENT - since).toBeLessThan(5 * 3600 * 1000);
  });
});

describe('the embedded database', () => {
  let database: EmbeddedDatabase;
  let opening: number;
  let opened: number;
  beforeAll(async () => {
    const config = loadConfig({ EMBEDDED_WORKER: 'false' });
    if (config.database.kind !== 'embedded') throw new Error('expected the embedded config');
    opening = Date.now();
    database = await openEmbeddedDatabase(config.database);
    opened = Date.now();
  });
  afterAll(() => database?.driver.close());

  test('opens with the history moved up to the moment it opened, rows and gaps unchanged', async () => {
    const { rows: found } = await database.pg.query<{
      newest: Date;
      first_start: Date;
      first_id: string;
      runs: number;
    }>(
      `SELECT max(greatest(start_date, coalesce(end_date, start_date))) AS newest, count(*)::int AS runs,
         min(start_date) AS first_start,
         (SELECT team_exec_id FROM dba_ai_agent_team_history ORDER BY start_date LIMIT 1) AS first_id
       FROM dba_ai_agent_team_history`,
    );
    const [db] = found;
    if (!db) throw new Error('no history');
    expect(db.runs).toBe(runs.length);
    // The newest moment is as far before the opening as it was before DEMO_PRESENT (the
    // history is moved in whole seconds, at some moment while the database opens).
    const newest = Math.max(
      ...runs.map((run) => Math.max(ms(run.start_date) ?? 0, ms(run.end_date) ?? 0)),
    );
    const shift = db.newest.getTime() - newest;
    expect(shift).toBeGreaterThanOrEqual(opening - DEMO_PRESENT - 1_000);
    expect(shift).toBeLessThanOrEqual(opened - DEMO_PRESENT);
    const first = runOf.get(db.first_id);
    expect(db.first_start.getTime() - (ms(first?.start_date) ?? 0)).toBe(shift);
  });
});
