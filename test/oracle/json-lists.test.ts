/**
 * The JSON lists (jsonArraySelect, src/db/sql/json-lists.ts): one JSON_ARRAYAGG per column, so
 * row i is index i of every column only if every aggregate orders the rows alike. Oracle
 * sorts each ordered aggregate in its own work area, where one may spill and merge while
 * another stays in memory: rows whose keys tie can then come out in a different order per
 * column. PostgreSQL sorts the input once for aggregates sharing an ORDER BY, unless told not
 * to; with that off and the least work_mem, each aggregate sorts alone and the large text
 * columns spill, as Oracle's may. The demo logs some runs' first task twice under one
 * TASK_ORDER (src/db/embedded/demo-data.ts): every task must still come back whole.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type Catalog, discoverCatalog } from '../../src/db/catalog.js';
import { type EmbeddedDatabase, openEmbeddedDatabase } from '../../src/db/embedded/database.js';
import { num, str, strOrNull } from '../../src/db/rows.js';
import { sql } from '../../src/db/sql/fragment.js';
import { historyPlanSql } from '../../src/db/sql/history-plan.js';
import { inList } from '../../src/db/sql/in-lists.js';
import { jsonArrayQuery, jsonListColumn, MisalignedList } from '../../src/db/sql/json-lists.js';
import { fetchRows } from '../../src/db/sql/query.js';
import { teamHistorySql } from '../../src/db/sql/team-history.js';
import { type ChildPlan, everyColumn, plannedChild, RELATIONS } from '../../src/model/plan.js';
import type { TaskRun, TeamRun, ToolCall } from '../../src/model/team.js';
import { ANONYMOUS_ADMIN } from '../../src/model/viewer.js';

let database: EmbeddedDatabase;
let catalog: Catalog;

beforeAll(async () => {
  const config = loadConfig({ EMBEDDED_WORKER: 'false' });
  if (config.database.kind !== 'embedded') throw new Error('expected the embedded config');
  database = await openEmbeddedDatabase(config.database);
  catalog = await discoverCatalog(database.driver, 'dba', 'APP_USER');
});
afterAll(() => database?.driver.close());

/** Each aggregate sorts on its own, spilling its large columns: Oracle's case. */
async function sortPerAggregate<T>(run: () => Promise<T>): Promise<T> {
  await database.pg.exec(`SET enable_presorted_aggregate = off; SET work_mem = '64kB'`);
  try {
    return await run();
  } finally {
    await database.pg.exec('RESET enable_presorted_aggregate; RESET work_mem');
  }
}

interface StoredTask {
  team_exec_id: string;
  task_order: string;
  state: string;
  input: string | null;
  result: string | null;
  start_date: Date;
}

/** A task's columns as one text, the same from the list and from the table. */
const whole = (t: {
  teamExecId: string;
  taskOrder: number;
  state: string;
  input: string | null;
  result: string | null;
  startDate: Date | null;
}) =>
  JSON.stringify([
    t.teamExecId,
    t.taskOrder,
    t.state,
    t.input,
    t.result,
    t.startDate?.toISOString() ?? null,
  ]);

/** A task read from the table, as `whole` writes a task of a list. */
const storedTask = (task: StoredTask) =>
  whole({
    teamExecId: task.team_exec_id,
    taskOrder: Number(task.task_order),
    state: task.state,
    input: task.input,
    result: task.result,
    startDate: task.start_date,
  });

describe('a JSON list whose order ties', () => {
  test('the demo holds tasks logged twice under one TASK_ORDER', async () => {
    const { rows } = await database.pg.query<{ ties: number }>(
      `SELECT count(*)::int AS ties FROM (SELECT team_exec_id, task_order FROM dba_ai_agent_task_history
         GROUP BY team_exec_id, task_order HAVING count(*) > 1) d`,
    );
    expect(rows[0]?.ties).toBeGreaterThan(20);
  });

  test('comes back with every row whole when each aggregate sorts on its own', async () => {
    const { rows: stored } = await database.pg.query<StoredTask>(
      `SELECT team_exec_id, task_order, state, input, result, start_date
       FROM dba_ai_agent_task_history ORDER BY team_exec_id, task_order`,
    );
    const runs = [...new Set(stored.map((task) => task.team_exec_id))].slice(0, 1000);
    const inRuns = stored.filter((task) => runs.includes(task.team_exec_id));
    const tasks = await sortPerAggregate(() =>
      fetchRows(
        database.driver,
        teamHistorySql(catalog).tasksByRuns(ANONYMOUS_ADMIN)(inList('exec', runs)),
      ),
    );
    const expected = inRuns.map((task) => storedTask(task)).sort();
    expect(tasks.map(whole).sort()).toEqual(expected);
    // Grouped by run, in TASK_ORDER: the order the loaders hand on.
    const keys = tasks.map((task: TaskRun) => [task.teamExecId, task.taskOrder] as const);
    const sorted = [...keys].sort((a, b) => (a[0] === b[0] ? a[1] - b[1] : a[0] < b[0] ? -1 : 1));
    expect(keys).toEqual(sorted);
  });

  test('the dashboard tree (history.runsOfTeams with tasks) keeps its tasks whole too', async () => {
    const { rows: teams } = await database.pg.query<{ team_name: string }>(
      'SELECT DISTINCT team_name FROM dba_ai_agent_team_history ORDER BY team_name',
    );
    const names = teams.map((team) => team.team_name);
    const plans = historyPlanSql(catalog);
    const plan = everyColumn('TeamRun', [
      ['tasks', { kind: 'relation', relation: RELATIONS.runTasks, plan: everyColumn('TaskRun') }],
    ]);
    const [tree] = await sortPerAggregate(() =>
      fetchRows(
        database.driver,
        plans.planned(
          ANONYMOUS_ADMIN,
          plans.runsOfTeams({}, { offset: 0, limit: 100 }, ANONYMOUS_ADMIN, inList('team', names)),
          plan,
        ),
      ),
    );
    const treeTasks = (tree?.rows ?? []).flatMap(
      ({ run }) => (plannedChild(run, 'tasks') ?? []) as TaskRun[],
    );
    const { rows: stored } = await database.pg.query<StoredTask>(
      `SELECT team_exec_id, task_order, state, input, result, start_date FROM dba_ai_agent_task_history`,
    );
    const expected = stored.map(storedTask);
    expect(treeTasks.length).toBe(stored.length);
    expect(treeTasks.map(whole).sort()).toEqual(expected.sort());
  });
});

describe('lists that name their run by its position in the root list', () => {
  test('a page of runs read backwards by END_DATE (nulls, ties) gives each run its own tasks and calls', async () => {
    const plans = historyPlanSql(catalog);
    const calls: ChildPlan = {
      kind: 'relation',
      relation: RELATIONS.taskToolCalls,
      plan: everyColumn('ToolCall'),
    };
    const plan = everyColumn('TeamRun', [
      [
        'tasks',
        {
          kind: 'relation',
          relation: RELATIONS.runTasks,
          plan: everyColumn('TaskRun', [['toolCalls', calls]]),
        },
      ],
      [
        'toolCalls',
        { kind: 'relation', relation: RELATIONS.runToolCalls, plan: everyColumn('ToolCall') },
      ],
    ]);
    const [page] = await sortPerAggregate(() =>
      fetchRows(
        database.driver,
        plans.planned(
          ANONYMOUS_ADMIN,
          plans.runsPage(
            ANONYMOUS_ADMIN,
            {},
            { field: 'END_DATE', direction: 'DESC' },
            {
              backward: true,
              limit: 200,
            },
          ),
          plan,
        ),
      ),
    );
    const runs = (page?.rows ?? []).map(({ node }) => node as TeamRun);
    expect(runs).toHaveLength(200);
    const { rows: stored } = await database.pg.query<StoredTask>(
      `SELECT team_exec_id, task_order, state, input, result, start_date FROM dba_ai_agent_task_history
       WHERE team_exec_id = ANY($1)`,
      [runs.map((run) => run.execId)],
    );
    const { rows: storedCalls } = await database.pg.query<{ team_exec_id: string; n: number }>(
      `SELECT team_exec_id, count(*)::int AS n FROM dba_ai_agent_tool_history
       WHERE team_exec_id = ANY($1) GROUP BY team_exec_id`,
      [runs.map((run) => run.execId)],
    );
    for (const run of runs) {
      const tasks = plannedChild(run, 'tasks') as TaskRun[];
      const expected = stored
        .filter((task) => task.team_exec_id === run.execId)
        .map((task) => storedTask(task));
      expect(tasks.map(whole).sort()).toEqual(expected.sort());
      const runCalls = plannedChild(run, 'toolCalls') as ToolCall[];
      expect(runCalls).toHaveLength(storedCalls.find((c) => c.team_exec_id === run.execId)?.n ?? 0);
      for (const call of runCalls) expect(call.teamExecId).toBe(run.execId);
      for (const task of tasks) {
        for (const call of plannedChild(task, 'toolCalls') as ToolCall[]) {
          expect([call.teamExecId, call.taskOrder]).toEqual([task.teamExecId, task.taskOrder]);
        }
      }
    }
  });

  test('a position that names no parent fails loudly', () => {
    const { read } = jsonListColumn(
      'test.tasks',
      {
        select: [sql`TASK_NAME`, sql`p.PARENT_POSITION`],
        from: sql`DBA_AI_AGENT_TASK_HISTORY t JOIN p ON p.PARENT_KEY = TEAM_EXEC_ID`,
        orderBy: ['TASK_NAME'],
        totalOrder: true,
        parentPosition: { member: 'PARENT_POSITION', property: 'teamExecId' },
      },
      1,
    );
    const tasks = (positions: unknown[]) =>
      read(
        [positions.length, positions.map(() => 'T'), positions],
        (row) => [row.teamExecId, row.taskName],
        ['E1', 'E2'],
      );
    expect(tasks([1, 0, 1])).toEqual([
      ['E2', 'T'],
      ['E1', 'T'],
      ['E2', 'T'],
    ]);
    expect(() => tasks([2])).toThrow(/test\.tasks: row 0 names no parent of 2/);
    expect(() => tasks([null])).toThrow(MisalignedList);
  });
});

describe('the statement text', () => {
  test('every aggregate orders by one sequence the query below numbers once per row', () => {
    const query = teamHistorySql(catalog).tasksByRuns(ANONYMOUS_ADMIN)(inList('exec', ['E1']));
    const text = query.statement.text;
    const aggregates = [...text.matchAll(/JSON_ARRAYAGG\(q\.\w+ ORDER BY ([^)]*?) NULL ON NULL/g)];
    expect(aggregates.length).toBeGreaterThan(5);
    for (const [, order] of aggregates) expect(order).toBe('q.SEQ');
    expect(text).toContain(
      'ROW_NUMBER() OVER (ORDER BY s.TEAM_EXEC_ID, s.TASK_ORDER, s.START_DATE) AS SEQ',
    );
    expect(text).toMatch(/^SELECT JSON_ARRAY\(COUNT\(\*\), JSON_ARRAYAGG/);
    expect(text).toMatch(
      /NULL ON NULL RETURNING CLOB\) NULL ON NULL RETURNING CLOB\) AS ROWS_JSON/,
    );
  });

  test('a list whose order ends in a key orders every aggregate by that order, numbering nothing', () => {
    const query = teamHistorySql(catalog).toolCallsByRuns(ANONYMOUS_ADMIN)(inList('exec', ['E1']));
    const text = query.statement.text;
    const aggregates = [...text.matchAll(/JSON_ARRAYAGG\(q\.\w+ ORDER BY ([^)]*?) NULL ON NULL/g)];
    expect(aggregates.length).toBeGreaterThan(5);
    for (const [, order] of aggregates) {
      expect(order).toBe('q.TEAM_EXEC_ID, q.TASK_ORDER, q.START_DATE, q.INVOCATION_ID');
    }
    expect(text).not.toContain('ROW_NUMBER');
  });
});

describe('decoding a list', () => {
  // Three members, in this order: TEAM_EXEC_ID, TASK_ORDER, TOOL_NAME.
  const list = () =>
    jsonArrayQuery(
      'test.calls',
      {
        select: [sql`TEAM_EXEC_ID`, sql`TASK_ORDER`, sql`TOOL_NAME`],
        from: sql`DBA_AI_AGENT_TOOL_HISTORY`,
        orderBy: ['TEAM_EXEC_ID', 'TASK_ORDER'],
        totalOrder: false,
      },
      (row) => ({
        teamExecId: str(row.teamExecId),
        taskOrder: num(row.taskOrder),
        toolName: strOrNull(row.toolName),
      }),
    );
  const decode = (json: unknown) => list().decodeRows([{ rowsJson: JSON.stringify(json) }]);

  test('reads the row count, then one column per member', () => {
    expect(
      decode([2, ['E1', 'E1'], [1, 2], ['LOOKUP', null]]).map((call) => [
        call.teamExecId,
        call.taskOrder,
        call.toolName,
      ]),
    ).toEqual([
      ['E1', 1, 'LOOKUP'],
      ['E1', 2, null],
    ]);
    expect(decode([0, null, null, null])).toEqual([]);
    // A column that is NULL holds no value for any row.
    expect(decode([1, ['E1'], [1], null]).map((call) => call.toolName)).toEqual([null]);
  });

  test('fails loudly on a column one value short, never shifting the rows after it', () => {
    expect(() => decode([3, ['E1', 'E1', 'E1'], [1, 2, 3], ['A', 'C']])).toThrow(MisalignedList);
    expect(() => decode([3, ['E1', 'E1', 'E1'], [1, 2, 3], ['A', 'B', 'C', 'D']])).toThrow(
      /toolName holds 4 values for 3 rows/,
    );
  });

  test('fails loudly on a member left out (ABSENT ON NULL) or a list without its count', () => {
    expect(() => decode([1, ['E1'], [1]])).toThrow(MisalignedList);
    expect(() => decode([['E1'], [1], ['A']])).toThrow(MisalignedList);
    expect(() => decode([])).toThrow(MisalignedList);
    expect(() => list().decodeRows([{ rowsJson: null }])).toThrow(MisalignedList);
  });

  test('names the statement and the member, never a value', () => {
    try {
      decode([2, ['SECRET_RUN', 'SECRET_RUN'], [1, 2], ['SECRET_TOOL']]);
      expect.unreachable();
    } catch (error) {
      expect(String(error)).toMatch(/^MisalignedList: test\.calls: column toolName/);
      expect(String(error)).not.toContain('SECRET');
    }
  });
});

describe('a text column a release stores as JSON', () => {
  test('comes back as its JSON text from a list, as from a row, never "[object Object]"', () => {
    // JSON_ARRAYAGG nests a JSON-typed (or IS JSON) OUTPUT as JSON, not as a string.
    const calls = teamHistorySql(catalog)
      .toolCallsByRuns(ANONYMOUS_ADMIN)(inList('exec', ['E1']))
      .decodeRows([
        {
          rowsJson: JSON.stringify([
            2,
            ['I1', 'I2'],
            ['E1', 'E1'],
            [1, 1],
            [null, null],
            ['LOOKUP', 'LOOKUP'],
            [null, null],
            [null, null],
            [null, null],
            [null, null],
            [{ query: 'q' }, 'plain text'],
            [{ rows: 3 }, [1, 2]],
            ['done', null],
          ]),
        },
      ]);
    expect(calls.map((call) => [call.input, call.output, call.toolOutput])).toEqual([
      ['{"query":"q"}', '{"rows":3}', 'done'],
      ['plain text', '[1,2]', null],
    ]);
  });
});
