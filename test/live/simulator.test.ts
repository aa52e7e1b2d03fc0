import { mkdir, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import {
  type EmbeddedDatabase,
  type EmbeddedPg,
  openEmbeddedDatabase,
} from '../../src/db/embedded/database.js';
import { DEMO_PRESENT } from '../../src/db/embedded/demo-data.js';
import { Simulator, setRunState, startRun } from '../../src/db/embedded/simulator.js';
import { WAIT_MS } from '../support/wait.js';
import { until } from './support.js';

let one: EmbeddedDatabase;
let two: EmbeddedDatabase;

beforeAll(async () => {
  // Both databases hold the same dates, as generated.
  const config = loadConfig({ EMBEDDED_DEMO_NOW: new Date(DEMO_PRESENT).toISOString() });
  if (config.database.kind !== 'embedded') throw new Error('embedded only');
  [one, two] = await Promise.all([
    openEmbeddedDatabase(config.database),
    openEmbeddedDatabase(config.database),
  ]);
});
afterAll(async () => {
  await Promise.all([one.driver.close(), two.driver.close()]);
});

async function run(pg: EmbeddedPg, execId: string) {
  const [history] = (
    await pg.query<{ state: string; end_date: Date | null }>(
      'SELECT state, end_date FROM dba_ai_agent_team_history WHERE team_exec_id = $1',
      [execId],
    )
  ).rows;
  const tasks = (
    await pg.query<{ task_name: string; state: string; end_date: Date | null }>(
      `SELECT task_name, state, end_date FROM dba_ai_agent_task_history
       WHERE team_exec_id = $1 ORDER BY task_order`,
      [execId],
    )
  ).rows;
  const calls = (
    await pg.query<{ tool_name: string; start_date: Date; end_date: Date | null; output: string }>(
      `SELECT tool_name, start_date, end_date, output FROM dba_ai_agent_tool_history
       WHERE team_exec_id = $1 ORDER BY start_date, invocation_id`,
      [execId],
    )
  ).rows;
  return { ...history, tasks, calls };
}

describe('setRunState and startRun', () => {
  test('a run goes through the human loop with its tasks and tool calls', async () => {
    const pg = one.pg;
    const execId = 'SIMULATOR_TEST_RUN_1';
    const at = (s: number) => new Date(Date.UTC(2026, 10, 30, 12, 0, s));
    await startRun(pg, { owner: 'APP_USER', teamName: 'ORDER_SUPPORT_TEAM', execId }, at(0));
    let state = await run(pg, execId);
    expect(state).toMatchObject({ state: 'RUNNING', end_date: null });
    expect(state.tasks).toEqual([
      { task_name: 'ANSWER_ORDER_QUESTION', state: 'RUNNING', end_date: null },
    ]);
    expect(state.calls).toEqual([
      expect.objectContaining({ tool_name: 'ORDER_LOOKUP', end_date: null }),
    ]);

    await setRunState(pg, execId, 'WAITING_FOR_HUMAN', at(10));
    state = await run(pg, execId);
    expect(state.tasks.map((t) => [t.task_name, t.state])).toEqual([
      ['ANSWER_ORDER_QUESTION', 'SUCCEEDED'],
      ['PROCESS_REFUND', 'WAITING_FOR_HUMAN'],
    ]);
    const open = state.calls.filter((c) => c.end_date === null);
    expect(open).toEqual([
      expect.objectContaining({ tool_name: 'REFUND_APPROVAL', start_date: at(10) }),
    ]);

    await setRunState(pg, execId, 'RESUMING', at(20));
    state = await run(pg, execId);
    expect(state.tasks.at(-1)?.state).toBe('RESUMING');
    expect(state.calls.find((c) => c.tool_name === 'REFUND_APPROVAL')).toMatchObject({
      end_date: at(20),
      output: '{"answer":"approved"}',
    });

    await setRunState(pg, execId, 'RUNNING', at(30));
    await setRunState(pg, execId, 'SUCCEEDED', at(40));
    state = await run(pg, execId);
    expect(state).toMatchObject({ state: 'SUCCEEDED', end_date: at(40) });
    expect(state.tasks.every((t) => t.end_date !== null)).toBe(true);
    expect(state.calls.every((c) => c.end_date !== null)).toBe(true);
    await expect(setRunState(pg, execId, 'RUNNING', at(50))).rejects.toThrow(/has ended/);
  });
});

describe('Simulator', () => {
  test('makes the same moves from the same seed on the same data', async () => {
    const a = new Simulator(one.pg, { seed: 7 });
    const b = new Simulator(two.pg, { seed: 7 });
    const start = Date.UTC(2026, 10, 30, 13, 0, 0);
    let moves = 0;
    for (let step = 0; step < 8; step++) {
      const at = new Date(start + step * 3_000);
      const made = await a.step(at);
      expect(await b.step(at)).toEqual(made);
      moves += made.length;
    }
    expect(moves).toBeGreaterThan(8);
    // Everything but the run the previous test added to the first database.
    const tables = async (pg: EmbeddedPg) =>
      Promise.all(
        [
          ['team', 'team_exec_id'],
          ['task', 'team_exec_id, task_order'],
          ['tool', 'invocation_id'],
        ].map(
          async ([kind, key]) =>
            (
              await pg.query(
                `SELECT * FROM dba_ai_agent_${kind}_history
                 WHERE team_exec_id <> 'SIMULATOR_TEST_RUN_1' ORDER BY ${key}`,
              )
            ).rows,
        ),
      );
    expect(await tables(two.pg)).toEqual(await tables(one.pg));
  });

  test('moves runs only along the documented transitions', async () => {
    const simulator = new Simulator(one.pg, { seed: 11 });
    const allowed: Record<string, string[]> = {
      RUNNING: ['WAITING_FOR_HUMAN', 'SUCCEEDED', 'FAILED'],
      WAITING_FOR_HUMAN: ['RESUMING'],
      RESUMING: ['RUNNING'],
    };
    const start = Date.UTC(2026, 10, 30, 14, 0, 0);
    for (let step = 0; step < 20; step++) {
      for (const move of await simulator.step(new Date(start + step * 1_000))) {
        if (move.from === null) expect(move.to).toBe('RUNNING');
        else expect(allowed[move.from]).toContain(move.to);
      }
    }
  });

  test('runs on a timer until stopped', async () => {
    const simulator = new Simulator(two.pg, { seed: 3, periodMs: 20 });
    const count = async () =>
      Number(
        (
          await two.pg.query<{ n: string }>(
            "SELECT count(*) AS n FROM dba_ai_agent_team_history WHERE start_date > now() - interval '1 minute' OR end_date > now() - interval '1 minute'",
          )
        ).rows[0]?.n,
      );
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = await count();
    const timersBefore = timers();
    simulator.start();
    await until(async () => (await count()) > before, WAIT_MS, 'the simulator to move a run');
    await simulator.stop();
    const after = await count();
    expect(after).toBeGreaterThan(before);
    // Stopped: the step under way was awaited, and no timer is left to start another.
    expect(timers()).toBeLessThanOrEqual(timersBefore);
    expect(await count()).toBe(after);
  });
});

describe('the demo in a steady state (issue 36, item 8)', () => {
  test('over two simulated hours, runs keep waiting for a person and the run count holds', async () => {
    // Its own database: the steps below age out history the other tests read.
    const config = loadConfig({ EMBEDDED_DEMO_NOW: new Date(DEMO_PRESENT).toISOString() });
    if (config.database.kind !== 'embedded') throw new Error('embedded only');
    const database = await openEmbeddedDatabase(config.database);
    try {
      const counts = async () =>
        (
          await database.pg.query<{ runs: number; waiting: number; active: number }>(
            `SELECT count(*)::int AS runs,
               count(*) FILTER (WHERE state = 'WAITING_FOR_HUMAN')::int AS waiting,
               count(*) FILTER (WHERE end_date IS NULL)::int AS active
             FROM dba_ai_agent_team_history`,
          )
        ).rows[0] as { runs: number; waiting: number; active: number };
      // What Select AI records beside a run, its tasks' prompts and failed jobs, goes with it.
      const unowned = async () =>
        (
          await database.pg.query<{ prompts: number; jobs: number; all: number }>(
            `SELECT
               (SELECT count(*)::int FROM dba_cloud_ai_conversation_prompts p
                WHERE NOT EXISTS (SELECT 1 FROM dba_ai_agent_task_history t
                  WHERE t.coversation_param::json->>'conversation_id' = p.conversation_id)) AS prompts,
               (SELECT count(*)::int FROM dba_scheduler_job_run_details d
                WHERE NOT EXISTS (SELECT 1 FROM dba_ai_agent_task_history t
                  WHERE d.owner = t.task_owner AND d.job_name = t.team_name || '$' || t.task_name
                    AND d.actual_start_date >= t.start_date - INTERVAL '1 minute'
                    AND (t.end_date IS NULL OR d.actual_start_date <= t.end_date + INTERVAL '1 minute'))) AS jobs,
               (SELECT count(*)::int FROM dba_cloud_ai_conversation_prompts)
                 + (SELECT count(*)::int FROM dba_scheduler_job_run_details) AS all`,
          )
        ).rows[0] as { prompts: number; jobs: number; all: number };
      const simulator = new Simulator(database.pg, { seed: 36 });
      const begin = await counts();
      const unownedBefore = await unowned();
      expect(unownedBefore).toMatchObject({ prompts: 0, jobs: 0 });
      expect(begin.waiting).toBeGreaterThan(0);
      // Steps 30 s apart on a clock that does not wait for them (the timer's are 3 s; the
      // same two hours in 2,400 such steps held too, at a minute of PGlite per 700 steps).
      const stepMs = 30_000;
      const hours = 2;
      let fewestWaiting = begin.waiting;
      let runs = { fewest: begin.runs, most: begin.runs };
      let started = 0;
      let ended = 0;
      let answered = 0;
      for (let step = 1; step <= (hours * 3_600_000) / stepMs; step++) {
        const moves = await simulator.step(new Date(DEMO_PRESENT + step * stepMs));
        started += moves.filter((m) => m.from === null).length;
        ended += moves.filter((m) => m.to === 'SUCCEEDED' || m.to === 'FAILED').length;
        answered += moves.filter((m) => m.from === 'WAITING_FOR_HUMAN').length;
        if (step % 5 === 0) {
          const now = await counts();
          fewestWaiting = Math.min(fewestWaiting, now.waiting);
          runs = { fewest: Math.min(runs.fewest, now.runs), most: Math.max(runs.most, now.runs) };
        }
      }
      const end = await counts();
      await mkdir('test-results', { recursive: true });
      await writeFile(
        'test-results/simulator-two-hours.json',
        `${JSON.stringify({ stepMs, begin, end, fewestWaiting, runs, started, ended, answered }, null, 2)}\n`,
      );
      expect(fewestWaiting).toBeGreaterThan(0);
      expect(runs.fewest).toBeGreaterThanOrEqual(begin.runs * 0.8);
      expect(runs.most).toBeLessThanOrEqual(begin.runs * 1.2);
      // Alive, not frozen: runs started, ended and waits were answered all along.
      expect(started).toBeGreaterThan(50);
      expect(ended).toBeGreaterThan(50);
      expect(answered).toBeGreaterThan(10);
      // The newest history is the simulator's: the oldest aged out.
      const { rows } = await database.pg.query<{ newest: Date }>(
        'SELECT max(start_date) AS newest FROM dba_ai_agent_team_history',
      );
      expect(rows[0]?.newest.getTime()).toBeGreaterThan(DEMO_PRESENT + (hours - 0.1) * 3_600_000);
      const unownedAfter = await unowned();
      expect(unownedAfter).toMatchObject({ prompts: 0, jobs: 0 });
      // Bounded as the runs are, not growing with every run the simulator has ended.
      expect(unownedAfter.all).toBeLessThanOrEqual(unownedBefore.all * 1.5);
    } finally {
      await database.driver.close();
    }
  }, 900_000);
});
