import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { EmbeddedPg } from '../src/db/embedded/database.js';
import { type GqlResult, startTestServer, type TestServer } from './support/server.js';

/**
 * teamRuns and toolCalls page by keyset cursors: a page starts after (or ends before) the
 * values of a row, so runs inserted while a client reads page after page shift nothing.
 * Rows are inserted into the embedded database's tables, as the simulator writes them.
 */
let t: TestServer;
let pg: EmbeddedPg;
beforeAll(async () => {
  t = await startTestServer();
  const embedded = t.server.database.embedded?.pg;
  if (!embedded) throw new Error('embedded only');
  pg = embedded;
});
afterAll(() => t.stop());
afterEach(async () => {
  await pg.query(`DELETE FROM dba_ai_agent_tool_history WHERE invocation_id LIKE 'KS\\_%'`);
  await pg.query(`DELETE FROM dba_ai_agent_team_history WHERE team_exec_id LIKE 'KS\\_%'`);
});

type Field = 'START_DATE' | 'END_DATE' | 'TEAM_NAME' | 'STATE';
type Direction = 'ASC' | 'DESC';
const ORDERS = (['START_DATE', 'END_DATE', 'TEAM_NAME', 'STATE'] as const).flatMap((field) =>
  (['ASC', 'DESC'] as const).map((direction) => ({ field, direction })),
);

interface Connection {
  totalCount: number;
  edges: { cursor: string; node: { id: string } }[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

interface PageArgs {
  first?: number;
  after?: string | null;
  last?: number;
  before?: string | null;
}

const RUNS = `query($first: Int, $after: String, $last: Int, $before: String,
    $orderBy: TeamRunOrder, $filter: TeamRunFilter) {
  list: teamRuns(first: $first, after: $after, last: $last, before: $before, orderBy: $orderBy, filter: $filter) {
    totalCount edges { cursor node { id: execId } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

const CALLS = `query($first: Int, $after: String, $last: Int, $before: String, $filter: ToolCallFilter) {
  list: toolCalls(first: $first, after: $after, last: $last, before: $before, filter: $filter) {
    totalCount edges { cursor node { id: invocationId } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

async function page(
  query: string,
  variables: Record<string, unknown>,
): Promise<Connection & { statements: number }> {
  let result: GqlResult<{ list: Connection }> | undefined;
  const statements = await t.countStatements(async () => {
    result = await t.gql<{ list: Connection }>(query, variables);
  });
  expect(result?.errors).toBeUndefined();
  const list = result?.data?.list;
  if (!list) throw new Error('no page');
  return { ...list, statements };
}

/**
 * Every page of a list, first to last (or last to first, `backward`), in the list's order;
 * `between` runs after each page is read.
 */
async function traverse(
  query: string,
  variables: Record<string, unknown>,
  size: number,
  backward: boolean,
  between: (seen: readonly string[]) => Promise<void> = async () => {},
): Promise<{ ids: string[]; pages: (Connection & { statements: number })[] }> {
  const pages: (Connection & { statements: number })[] = [];
  let ids: string[] = [];
  let cursor: string | null = null;
  for (;;) {
    const args: PageArgs = backward
      ? { last: size, before: cursor }
      : { first: size, after: cursor };
    const current = await page(query, { ...variables, ...args });
    pages.push(current);
    const got = current.edges.map((edge) => edge.node.id);
    ids = backward ? [...got, ...ids] : [...ids, ...got];
    const more = backward ? current.pageInfo.hasPreviousPage : current.pageInfo.hasNextPage;
    if (!more) return { ids, pages };
    cursor = backward ? current.pageInfo.startCursor : current.pageInfo.endCursor;
    await between(ids);
  }
}

const COLUMN: Record<Field, string> = {
  START_DATE: 'start_date',
  END_DATE: 'end_date',
  TEAM_NAME: 'team_name',
  STATE: 'state',
};

/** The runs in an order as PostgreSQL itself sorts them (to the microsecond, nulls last). */
async function runsInOrder(field: Field, direction: Direction, where = 'TRUE'): Promise<string[]> {
  const { rows } = await pg.query<{ id: string }>(
    `SELECT team_exec_id AS id FROM dba_ai_agent_team_history WHERE ${where}
     ORDER BY ${COLUMN[field]} ${direction} NULLS LAST, team_exec_id`,
  );
  return rows.map((row) => row.id);
}

/** A copy of a run under a new id: the same order keys, to the microsecond. */
async function copyRun(execId: string, newId: string): Promise<void> {
  await pg.query(
    `INSERT INTO dba_ai_agent_team_history
     SELECT $1, team_name, team_owner, start_date, end_date, state, team_instance_id
     FROM dba_ai_agent_team_history WHERE team_exec_id = $2`,
    [newId, execId],
  );
}

/** Runs of one team whose dates differ below the millisecond, tie, or are null. */
async function insertMicrosecondRuns(team: string): Promise<void> {
  const base = '2026-09-15 08:30:00';
  const rows: [string, string | null, string | null, string][] = [
    ['KS_M01', `${base}.123100+00`, `${base}.500100+00`, 'SUCCEEDED'],
    ['KS_M02', `${base}.123200+00`, `${base}.500200+00`, 'FAILED'],
    ['KS_M03', `${base}.123200+00`, `${base}.500200+00`, 'SUCCEEDED'],
    ['KS_M04', `${base}.123900+00`, null, 'RUNNING'],
    ['KS_M05', `${base}.124000+00`, null, 'WAITING_FOR_HUMAN'],
    ['KS_M06', `${base}.122999+00`, `${base}.500999+00`, 'FAILED'],
    ['KS_M07', `${base}.123000+00`, `${base}.500000+00`, 'SUCCEEDED'],
    ['KS_M08', null, null, 'RESUMING'],
    ['KS_M09', `${base}.123201+00`, `${base}.500201+00`, 'SUCCEEDED'],
  ];
  for (const [id, start, end, state] of rows) {
    await pg.query(
      `INSERT INTO dba_ai_agent_team_history VALUES ($1, $2, 'APP_USER', $3, $4, $5, 1)`,
      [id, team, start, end, state],
    );
  }
}

describe('teamRuns pages by keyset', () => {
  test('with runs inserted between page reads, every run there at the start comes back exactly once, in every order, both ways', async () => {
    await insertMicrosecondRuns('REPORT_SUMMARY_AGENT_TEAM');
    let inserted = 0;
    for (const { field, direction } of ORDERS) {
      for (const backward of [false, true]) {
        const label = `${field} ${direction}${backward ? ' backward' : ''}`;
        const before = await runsInOrder(field, direction);
        // Copies of the list's first row, of the row at the cursor and of its last row: they
        // sort ahead of the page, exactly at its edge and behind it.
        const { ids } = await traverse(
          RUNS,
          { orderBy: { field, direction } },
          40,
          backward,
          async (seen) => {
            const now = await runsInOrder(field, direction);
            for (const source of [now[0], backward ? seen[0] : seen.at(-1), now.at(-1)]) {
              inserted += 1;
              await copyRun(source as string, `KS_NEW_${String(inserted).padStart(5, '0')}`);
            }
          },
        );
        expect(new Set(ids).size, label).toBe(ids.length);
        const seen = new Set(ids);
        expect(
          before.filter((id) => !seen.has(id)),
          label,
        ).toEqual([]);
      }
    }
    expect(inserted).toBeGreaterThan(ORDERS.length * 2 * 3);
  });

  test('read forward or backward, pages follow the database’s own order to the microsecond, nulls last', async () => {
    await insertMicrosecondRuns('KS_TEAM');
    for (const { field, direction } of ORDERS) {
      const expected = await runsInOrder(field, direction, `team_name = 'KS_TEAM'`);
      const filter = { teamName: 'KS_TEAM' };
      const variables = { orderBy: { field, direction }, filter };
      for (const size of [1, 2]) {
        const forward = await traverse(RUNS, variables, size, false);
        const backward = await traverse(RUNS, variables, size, true);
        expect(forward.ids, `${field} ${direction} by ${size}`).toEqual(expected);
        expect(backward.ids, `${field} ${direction} by ${size}, backward`).toEqual(expected);
      }
    }
  });

  test('totalCount counts the filter on every page, and each page is one statement', async () => {
    const total = (await runsInOrder('START_DATE', 'DESC')).length;
    const { pages } = await traverse(RUNS, {}, 50, false);
    expect(pages.length).toBeGreaterThan(2);
    for (const p of pages) {
      expect(p.totalCount).toBe(total);
      expect(p.statements).toBe(1);
    }
    const last = pages.at(-1) as Connection;
    // Past the last row the total still comes with the (empty) page, in the same statement.
    const past = await page(RUNS, { first: 10, after: last.pageInfo.endCursor });
    expect(past).toMatchObject({ totalCount: total, edges: [], statements: 1 });
    expect(past.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
  });

  test('a page that selects no totalCount is the same page, read without counting', async () => {
    const driver = t.server.database.driver;
    const query = driver.query.bind(driver);
    const texts: string[] = [];
    driver.query = (statement, binds) => {
      texts.push(statement.text);
      return query(statement, binds);
    };
    try {
      for (const [field, shape] of [
        ['teamRuns', 'execId'],
        ['toolCalls', 'invocationId'],
      ] as const) {
        for (const window of ['first: 7', 'last: 7']) {
          const read = async (selection: string) => {
            texts.length = 0;
            const { data, errors } = await t.post<Record<string, Connection>>(
              `{ ${field}(${window}) { ${selection} edges { cursor node { id: ${shape} } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
            );
            expect(errors).toBeUndefined();
            expect(texts).toHaveLength(1);
            return {
              page: data?.[field],
              counts: texts.some((text) => text.includes('TOTAL_COUNT')),
            };
          };
          const counted = await read('totalCount');
          const uncounted = await read('');
          expect(counted.counts).toBe(true);
          expect(uncounted.counts).toBe(false);
          const { totalCount, ...rest } = counted.page as Connection;
          expect(totalCount).toBeGreaterThan(7);
          expect(uncounted.page).toEqual(rest);
        }
      }
    } finally {
      driver.query = query;
    }
  });

  test('pageInfo: the first page has no previous page, the last no next one, either way', async () => {
    const first = await page(RUNS, { first: 5 });
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const second = await page(RUNS, { first: 5, after: first.pageInfo.endCursor });
    expect(second.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const end = await page(RUNS, { last: 5 });
    expect(end.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const back = await page(RUNS, { last: 5, before: second.pageInfo.startCursor });
    expect(back.edges.map((e) => e.node.id)).toEqual(first.edges.map((e) => e.node.id));
    expect(back.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const between = await page(RUNS, {
      first: 10,
      after: first.edges[1]?.cursor,
      before: second.edges[2]?.cursor,
    });
    expect(between.edges.map((e) => e.node.id)).toEqual(
      [...first.edges.slice(2), ...second.edges.slice(0, 2)].map((e) => e.node.id),
    );
  });
});

describe('toolCalls pages by keyset', () => {
  const RUN = 'KS_CALLS_RUN';
  beforeAll(async () => {
    await pg.query(
      `INSERT INTO dba_ai_agent_team_history VALUES ($1, 'REPORT_SUMMARY_AGENT_TEAM', 'APP_USER',
         '2026-09-15 08:30:00+00', NULL, 'RUNNING', 1)`,
      [RUN],
    );
  });
  afterAll(() => pg.query('DELETE FROM dba_ai_agent_team_history WHERE team_exec_id = $1', [RUN]));

  async function insertCall(id: string, start: string | null): Promise<void> {
    await pg.query(
      `INSERT INTO dba_ai_agent_tool_history (invocation_id, team_exec_id, task_order, tool_owner,
         tool_name, agent_name, task_name, start_date, end_date)
       VALUES ($1, $2, 1, 'APP_USER', 'KS_TOOL', 'KS_AGENT', 'KS_TASK', $3, NULL)`,
      [id, RUN, start],
    );
  }

  const callsInOrder = async () =>
    (
      await pg.query<{ id: string }>(
        `SELECT invocation_id AS id FROM dba_ai_agent_tool_history WHERE team_exec_id = $1
         ORDER BY start_date DESC NULLS LAST, invocation_id`,
        [RUN],
      )
    ).rows.map((row) => row.id);

  test('newest first to the microsecond, both ways, each call once while calls are inserted', async () => {
    const base = '2026-09-15 08:31:00';
    for (const [i, micros] of [
      '123100',
      '123200',
      '123200',
      '123999',
      '124000',
      '122999',
    ].entries()) {
      await insertCall(`KS_C${i}`, `${base}.${micros}+00`);
    }
    await insertCall('KS_C9', null);
    const expected = await callsInOrder();
    const filter = { teamExecId: RUN };
    expect((await traverse(CALLS, { filter }, 2, false)).ids).toEqual(expected);
    expect((await traverse(CALLS, { filter }, 2, true)).ids).toEqual(expected);
    let n = 0;
    for (const backward of [false, true]) {
      const { ids, pages } = await traverse(CALLS, { filter }, 2, backward, async () => {
        n += 1;
        await insertCall(`KS_N${n}_NEWEST`, `${base}.999999+00`);
        await insertCall(`KS_N${n}_OLDEST`, `${base}.000001+00`);
      });
      expect(new Set(ids).size).toBe(ids.length);
      expect(expected.filter((id) => !ids.includes(id))).toEqual([]);
      expect(pages[0]?.totalCount).toBeGreaterThanOrEqual(expected.length);
    }
  });
});

describe('bad cursors are BAD_USER_INPUT naming the argument', () => {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

  test('malformed, tampered, from another order or list, or an offset cursor of before', async () => {
    const { data } = await t.gql<{ teamRuns: { pageInfo: { endCursor: string } } }>(
      '{ teamRuns(first: 1) { pageInfo { endCursor } } }',
    );
    const startCursor = data?.teamRuns.pageInfo.endCursor as string;
    const calls = await t.gql<{ toolCalls: { pageInfo: { endCursor: string } } }>(
      '{ toolCalls(first: 1) { pageInfo { endCursor } } }',
    );
    const callCursor = calls.data?.toolCalls.pageInfo.endCursor as string;
    const cases: [string, string, string][] = [
      ['teamRuns', 'after', 'not-a-cursor'],
      ['teamRuns', 'before', Buffer.from('offset:20').toString('base64url')],
      ['teamRuns', 'after', encode(['teamRuns:START_DATE:DESC', ['yesterday', ''], 'X'])],
      [
        'teamRuns',
        'after',
        encode(['teamRuns:START_DATE:DESC', ['2026-09-15T08:30:00.123Z', 'x1'], 'X']),
      ],
      ['teamRuns', 'after', encode(['teamRuns:START_DATE:DESC', null, null])],
      ['teamRuns', 'after', encode(['teamRuns:START_DATE:DESC', null, 'X'.repeat(5000)])],
      ['teamRuns', 'after', encode(['teamRuns:START_DATE:DESC', null])],
      ['teamRuns', 'after', encode({ offset: 3 })],
      ['teamRuns(orderBy: { field: END_DATE })', 'after', startCursor],
      ['teamRuns(orderBy: { field: START_DATE, direction: ASC })', 'before', startCursor],
      ['teamRuns', 'after', callCursor],
      ['toolCalls', 'after', startCursor],
    ];
    for (const [field, argument, cursor] of cases) {
      const [name, args = ''] = field.split('(');
      const inner = args ? `${args.slice(0, -1)}, ` : '';
      const { errors, data: result } = await t.gql<Record<string, unknown>>(
        `query($c: String) { ${name}(${inner}${argument}: $c, ${argument === 'before' ? 'last' : 'first'}: 2) { totalCount } }`,
        { c: cursor },
      );
      const label = `${field} ${argument} ${cursor}`;
      expect(errors?.[0]?.extensions?.code, label).toBe('BAD_USER_INPUT');
      expect(errors?.[0]?.message, label).toContain(`Argument "${argument}"`);
      expect(errors?.[0]?.message, label).not.toMatch(/SELECT|ORA-|SQLSTATE/);
      expect(result?.[name as string] ?? null, label).toBeNull();
    }
  });

  test('forged values (dates outside years 1–9999, NUL) are BAD_USER_INPUT, never INTERNAL', async () => {
    const order = 'teamRuns:START_DATE:DESC';
    const cases = [
      encode([order, ['+275760-09-13T00:00:00.000Z', ''], 'X']),
      encode([order, ['-000001-01-01T00:00:00.000Z', ''], 'X']),
      encode([order, ['+010000-01-01T00:00:00.000Z', ''], 'X']),
      encode([order, ['2026-09-15T08:30:00.123Z', ''], 'X\u0000Y']),
      encode([order, null, 'nul\u0000']),
    ];
    for (const cursor of cases) {
      for (const argument of ['after', 'before']) {
        const { errors } = await t.gql(
          `query($c: String) { teamRuns(${argument}: $c, ${argument === 'before' ? 'last' : 'first'}: 2) { totalCount } }`,
          { c: cursor },
        );
        const label = `${argument} ${Buffer.from(cursor, 'base64url').toString()}`;
        expect(errors?.[0]?.extensions?.code, label).toBe('BAD_USER_INPUT');
        expect(errors?.[0]?.message, label).toContain(`Argument "${argument}"`);
      }
    }
  });
});
