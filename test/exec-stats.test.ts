import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MEASURES } from '../src/model/exec-stat.js';
import { startTestServer, type TestServer } from './support/server.js';

/** Seed 002's "V$AGENT_EXEC_STAT Columns" table, in its order (CON_ID aside). */
const SEED_002_MEASURE_COLUMNS = [
  'AGENT_EXECUTOR_LLM_CALL_COUNT',
  'AGENT_EXECUTOR_TOOL_CALL_COUNT',
  'AGENT_EXECUTOR_BRANCH_CALL_COUNT',
  'AGENT_EXECUTOR_BRANCH_DEFAULT_CALL_COUNT',
  'AGENT_EXECUTOR_MAP_NODE_CALL_COUNT',
  'AGENT_EXECUTOR_PARALLEL_MAP_NODE_CALL_COUNT',
  'AGENT_EXECUTOR_START_NODE_CALL_COUNT',
  'AGENT_EXECUTOR_END_NODE_CALL_COUNT',
  'AGENT_EXECUTOR_FLOW_NODE_CALL_COUNT',
  'AGENT_EXECUTOR_PARALLEL_FLOW_NODE_CALL_COUNT',
  'AGENT_EXECUTOR_TOTAL_TIME_LLM',
  'AGENT_EXECUTOR_TOTAL_TIME_TOOL',
  'AGENT_EXECUTOR_TOTAL_TIME_EXEC',
  'AGENT_EXECUTOR_TOTAL_TIME_START_NODE',
  'AGENT_EXECUTOR_TOTAL_TIME_END_NODE',
  'AGENT_EXECUTOR_TOTAL_TIME_FLOW_NODE',
  'AGENT_EXECUTOR_TOTAL_TIME_PARALLEL_FLOW_NODE',
  'AGENT_EXECUTOR_TOTAL_TIME_MAP_NODE',
  'AGENT_EXECUTOR_TOTAL_TIME_PARALLEL_MAP_NODE',
  'AGENT_EXECUTOR_TOTAL_TIME_BRANCH_NODE',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_GET_KEY_ANSWER',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_GET_KEY_ANSWER_FOUND',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_INSERT_CURRENT_QUESTION_LIST',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_GET_KEY_QUESTIONS',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_VECTOR_SEARCH_SIMPLIFIED',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_VECTOR_SEARCH',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_MERGE_AND_DEDUPLICATE_CHUNKS_SIMPLIFIED',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_MERGE_AND_DEDUPLICATE_CHUNKS',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_FILTER_ALREADY_RETRIEVED_CHUNKS_SIMPLIFIED',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_FILTER_ALREADY_RETRIEVED_CHUNKS',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_MERGE_QUESTION_LISTS',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_GROUP_CHUNKS',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_FLATTEN_QUERIES',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_REMOVE_SOURCE',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_GET_KEY_SELECT_CHOICES',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_FILTER_UNWANTED_CHUNKS',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_FLATTEN_CHUNK_LISTS',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_MERGE_RETRIEVED_CONTEXT_SIMPLIFIED',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_MERGE_RETRIEVED_CONTEXT',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_INC_COUNT',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_INCREMENT_COUNTER',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_GET_KEY_FINAL_ANSWER_READY',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_GET_KEY_FEEDBACK',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_STRINGIFY_VALUE',
  'AGENT_EXECUTOR_TOTAL_TIME_BUILTIN_PLSQL_EXEC',
  'AGENT_EXECUTOR_INPUT_TOKENS',
  'AGENT_EXECUTOR_OUTPUT_TOKENS',
];

/** The node-category times of seed 002; unattributed time is total time minus these. */
const NODE_TIME_FIELDS = [
  'totalTimeLlmMs',
  'totalTimeToolMs',
  'totalTimeStartNodeMs',
  'totalTimeEndNodeMs',
  'totalTimeFlowNodeMs',
  'totalTimeParallelFlowNodeMs',
  'totalTimeMapNodeMs',
  'totalTimeParallelMapNodeMs',
  'totalTimeBranchNodeMs',
];

type Stat = Record<string, number> & {
  conId: number;
  instId: number | null;
  llmTimePct: number | null;
  toolTimePct: number | null;
};

interface StatPage {
  execStats: {
    totalCount: number;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
    nodes: Stat[];
  };
}

type Scope = 'INSTANCE' | 'CLUSTER';
interface Filter {
  minTotalTimeMs?: number;
  conId?: number;
  instId?: number;
}

const MEASURE_FIELDS = MEASURES.map((m) => m.field).join(' ');

const STAT_PAGE = `query($first: Int, $after: String, $scope: ExecStatScope!, $filter: ExecStatFilter, $orderBy: ExecStatOrder) {
  execStats(first: $first, after: $after, scope: $scope, filter: $filter, orderBy: $orderBy) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes { ${MEASURE_FIELDS} conId instId llmTimePct toolTimePct unattributedTimeMs }
  }
}`;

let t: TestServer;
let instanceRows: Stat[];
let clusterRows: Stat[];

async function statPage(
  scope: Scope,
  filter: Filter | null,
  orderBy: { field: string; direction: 'ASC' | 'DESC' } | null = null,
  first = 100,
  after: string | null = null,
): Promise<StatPage['execStats']> {
  const { data, errors } = await t.gql<StatPage>(STAT_PAGE, {
    scope,
    filter,
    orderBy,
    first,
    after,
  });
  expect(errors).toBeUndefined();
  return data?.execStats as StatPage['execStats'];
}

/** Every row of the set, page by page through the cursors. */
async function allStats(
  scope: Scope,
  filter: Filter | null = null,
  orderBy: { field: string; direction: 'ASC' | 'DESC' } | null = null,
): Promise<{ totalCount: number; rows: Stat[] }> {
  const rows: Stat[] = [];
  let after: string | null = null;
  let totalCount = -1;
  for (let pages = 0; pages < 50; pages++) {
    const page = await statPage(scope, filter, orderBy, 100, after);
    totalCount = page.totalCount;
    rows.push(...page.nodes);
    if (!page.pageInfo.hasNextPage) return { totalCount, rows };
    after = page.pageInfo.endCursor;
  }
  throw new Error('more than 50 pages');
}

const matches = (row: Stat, filter: Filter) =>
  (filter.minTotalTimeMs === undefined || (row.totalTimeExecMs ?? 0) > filter.minTotalTimeMs) &&
  (filter.conId === undefined || row.conId === filter.conId) &&
  (filter.instId === undefined || row.instId === filter.instId);

/** ROUND(100 * part / NULLIF(total, 0), 1) in exact integer arithmetic (half away from zero). */
function percent(part: number, total: number): number | null {
  if (total === 0) return null;
  const scaled = 1000 * part;
  const quotient = Math.floor(scaled / total);
  return (2 * (scaled - quotient * total) >= total ? quotient + 1 : quotient) / 10;
}

const rounded = (value: number, decimals: number) =>
  Math.round(value * 10 ** decimals) / 10 ** decimals;

/** PERCENTILE_CONT: linear interpolation between the two nearest ranks. */
function percentileCont(sortedAscending: number[], fraction: number): number | null {
  if (sortedAscending.length === 0) return null;
  const position = fraction * (sortedAscending.length - 1);
  const low = sortedAscending[Math.floor(position)] as number;
  const high = sortedAscending[Math.ceil(position)] as number;
  return low + (position - Math.floor(position)) * (high - low);
}

const withoutInstId = ({ instId: _, ...rest }: Stat) => JSON.stringify(rest);

beforeAll(async () => {
  t = await startTestServer();
  [{ rows: instanceRows }, { rows: clusterRows }] = await Promise.all([
    allStats('INSTANCE'),
    allStats('CLUSTER'),
  ]);
});
afterAll(() => t.stop());

describe('execStats', () => {
  test('CLUSTER reads every instance with instId; INSTANCE reads the current one', async () => {
    const cluster = await statPage('CLUSTER', null, null, 1);
    const instance = await statPage('INSTANCE', null, null, 1);

    expect(cluster.totalCount).toBeGreaterThanOrEqual(300);
    expect(clusterRows).toHaveLength(cluster.totalCount);
    expect(instanceRows).toHaveLength(instance.totalCount);
    expect(instance.totalCount).toBeLessThan(cluster.totalCount);
    expect(new Set(clusterRows.map((r) => r.instId))).toEqual(new Set([1, 2]));
    expect(instanceRows.every((r) => r.instId === null)).toBe(true);
    // V$ is GV$ restricted to the instance the API is connected to (instance 1 here).
    expect(instanceRows.map(withoutInstId).sort()).toEqual(
      clusterRows
        .filter((r) => r.instId === 1)
        .map(withoutInstId)
        .sort(),
    );
  });

  test('a page costs one statement, whatever its size', async () => {
    expect(await t.countStatements(() => statPage('CLUSTER', null, null, 2))).toBe(1);
    expect(await t.countStatements(() => statPage('CLUSTER', null, null, 100))).toBe(1);
  });

  test('every column of seed 002 is a field of ExecStat', async () => {
    const { data, errors } = await t.gql<{
      __type: { fields: { name: string; description: string; type: { name: string | null } }[] };
    }>('{ __type(name: "ExecStat") { fields { name description type { name } } } }');
    expect(errors).toBeUndefined();
    const fields = data?.__type.fields ?? [];
    for (const column of SEED_002_MEASURE_COLUMNS) {
      const described = fields.filter((f) => f.description?.startsWith(`${column}:`));
      expect(described, column).toHaveLength(1);
    }
    expect(fields.map((f) => f.name)).toEqual(expect.arrayContaining(['conId', 'instId']));
    expect([...MEASURES.map((m) => m.column)].sort()).toEqual([...SEED_002_MEASURE_COLUMNS].sort());
    expect(fields.map((f) => f.name)).toEqual(expect.arrayContaining(MEASURES.map((m) => m.field)));
  });

  test('minTotalTimeMs keeps executions strictly longer than the bound, like the seed\'s "> 2000"', async () => {
    const above1839 = await allStats('INSTANCE', { minTotalTimeMs: 1839 });
    const above1840 = await allStats('INSTANCE', { minTotalTimeMs: 1840 });

    expect(above1839.rows.some((r) => r.totalTimeExecMs === 1840)).toBe(true);
    expect(above1840.rows.some((r) => r.totalTimeExecMs === 1840)).toBe(false);
    expect(above1840.rows.every((r) => (r.totalTimeExecMs ?? 0) > 1840)).toBe(true);
    expect(above1840.totalCount).toBe(
      instanceRows.filter((r) => matches(r, { minTotalTimeMs: 1840 })).length,
    );
  });

  test('conId and instId select the rows of one container and one instance', async () => {
    for (const [scope, filter, all] of [
      ['INSTANCE', { conId: 3 }, () => instanceRows],
      ['INSTANCE', { conId: 4 }, () => instanceRows],
      ['CLUSTER', { instId: 2 }, () => clusterRows],
      ['CLUSTER', { instId: 2, conId: 4, minTotalTimeMs: 1000 }, () => clusterRows],
    ] as const) {
      const { totalCount, rows } = await allStats(scope, filter);
      const expected = all().filter((r) => matches(r, filter));
      expect(expected.length, JSON.stringify(filter)).toBeGreaterThan(0);
      expect(totalCount).toBe(expected.length);
      expect(rows.map((r) => JSON.stringify(r)).sort()).toEqual(
        expected.map((r) => JSON.stringify(r)).sort(),
      );
    }
  });

  test('rows come slowest first by default, and in the requested order otherwise', async () => {
    const totals = instanceRows.map((r) => r.totalTimeExecMs ?? 0);
    expect(totals).toEqual([...totals].sort((a, b) => b - a));

    const byTokens = await allStats('CLUSTER', null, { field: 'INPUT_TOKENS', direction: 'ASC' });
    const tokens = byTokens.rows.map((r) => r.inputTokens ?? 0);
    expect(tokens).toEqual([...tokens].sort((a, b) => a - b));
    expect(byTokens.rows).toHaveLength(clusterRows.length);

    const byShare = await allStats(
      'CLUSTER',
      { instId: 2, conId: 4 },
      { field: 'LLM_TIME_PCT', direction: 'DESC' },
    );
    const shares = byShare.rows.map((r) => r.llmTimePct);
    // The zero-time execution has no share; it sorts last, not first.
    expect(shares.at(-1)).toBeNull();
    const known = shares.filter((s): s is number => s !== null);
    expect(known).toHaveLength(shares.length - 1);
    expect(known).toEqual([...known].sort((a, b) => b - a));
  });

  test('llmTimePct and toolTimePct are rounded to one decimal, and null when total time is 0', () => {
    for (const row of clusterRows) {
      const total = row.totalTimeExecMs ?? 0;
      expect(row.llmTimePct).toBe(percent(row.totalTimeLlmMs ?? 0, total));
      expect(row.toolTimePct).toBe(percent(row.totalTimeToolMs ?? 0, total));
    }
    const zero = clusterRows.filter((r) => r.totalTimeExecMs === 0);
    expect(zero).toContainEqual(
      expect.objectContaining({ instId: 2, conId: 4, llmTimePct: null, toolTimePct: null }),
    );
  });

  test('unattributedTimeMs is total time minus the node-category times, never below 0', () => {
    for (const row of clusterRows) {
      const attributed = NODE_TIME_FIELDS.reduce((sum, f) => sum + (row[f] ?? 0), 0);
      expect(row.unattributedTimeMs).toBe(Math.max(0, (row.totalTimeExecMs ?? 0) - attributed));
    }
  });

  test("the seed's two example rows are there, with the seed's percentages", () => {
    expect(instanceRows).toContainEqual(
      expect.objectContaining({
        conId: 3,
        llmCallCount: 2,
        toolCallCount: 1,
        branchCallCount: 1,
        totalTimeExecMs: 1840,
        inputTokens: 640,
        outputTokens: 120,
      }),
    );
    expect(instanceRows).toContainEqual(
      expect.objectContaining({
        conId: 3,
        totalTimeExecMs: 4200,
        totalTimeLlmMs: 3500,
        totalTimeToolMs: 280,
        llmTimePct: 83.3,
        toolTimePct: 6.7,
        llmCallCount: 5,
        toolCallCount: 2,
        inputTokens: 8200,
        outputTokens: 640,
      }),
    );
  });

  test('the seed\'s "diagnose" query is one GraphQL query: slowest first, all over 2 s', async () => {
    const diagnose = `{
      execStats(scope: INSTANCE, first: 100, filter: { minTotalTimeMs: 2000 },
                orderBy: { field: TOTAL_TIME, direction: DESC }) {
        totalCount
        nodes {
          conId totalTimeExecMs totalTimeLlmMs totalTimeToolMs llmTimePct toolTimePct
          llmCallCount toolCallCount inputTokens outputTokens
        }
      }
    }`;
    let result: Awaited<ReturnType<typeof t.gql<StatPage>>> | undefined;
    const statements = await t.countStatements(async () => {
      result = await t.gql<StatPage>(diagnose);
    });
    expect(statements).toBe(1);
    expect(result?.errors).toBeUndefined();
    const { totalCount, nodes } = result?.data?.execStats ?? { totalCount: -1, nodes: [] };

    const expected = instanceRows
      .filter((r) => (r.totalTimeExecMs ?? 0) > 2000)
      .sort((a, b) => (b.totalTimeExecMs ?? 0) - (a.totalTimeExecMs ?? 0));
    expect(totalCount).toBe(expected.length);
    expect(nodes.length).toBe(Math.min(100, expected.length));
    expect(nodes.every((n) => (n.totalTimeExecMs ?? 0) > 2000)).toBe(true);
    expect(nodes.map((n) => n.totalTimeExecMs)).toEqual(
      expected.slice(0, 100).map((r) => r.totalTimeExecMs),
    );
  });
});

interface Summary {
  executionCount: number;
  totals: Record<string, number>;
  totalTimeAvgMs: number | null;
  totalTimeP50Ms: number | null;
  totalTimeP95Ms: number | null;
  totalTimeP99Ms: number | null;
  totalTimeMaxMs: number | null;
  llmTimePct: number | null;
  toolTimePct: number | null;
}

const SUMMARY = `query($scope: ExecStatScope!, $filter: ExecStatFilter) {
  execStatSummary(scope: $scope, filter: $filter) {
    executionCount totals { ${MEASURE_FIELDS} }
    totalTimeAvgMs totalTimeP50Ms totalTimeP95Ms totalTimeP99Ms totalTimeMaxMs
    llmTimePct toolTimePct
  }
}`;

async function summary(scope: Scope, filter: Filter | null): Promise<Summary> {
  const { data, errors } = await t.gql<{ execStatSummary: Summary }>(SUMMARY, { scope, filter });
  expect(errors).toBeUndefined();
  return data?.execStatSummary as Summary;
}

describe('execStatSummary', () => {
  test.each([
    ['INSTANCE', {}],
    ['CLUSTER', {}],
    ['INSTANCE', { minTotalTimeMs: 2000 }],
    ['CLUSTER', { conId: 3 }],
    ['CLUSTER', { instId: 2, conId: 4 }],
  ] as [Scope, Filter][])('%s %j matches the rows it summarises', async (scope, filter) => {
    const rows = (scope === 'CLUSTER' ? clusterRows : instanceRows).filter((r) =>
      matches(r, filter),
    );
    const totals = rows.map((r) => r.totalTimeExecMs ?? 0).sort((a, b) => a - b);
    const sum = (field: string) => rows.reduce((s, r) => s + (r[field] ?? 0), 0);

    const result = await summary(scope, filter);

    expect(result.executionCount).toBe(rows.length);
    for (const m of MEASURES) expect(result.totals[m.field], m.field).toBe(sum(m.field));
    expect(result.totalTimeMaxMs).toBe(totals.at(-1));
    // Averages and interpolated percentiles are rounded to 0.1 ms for the people reading them.
    expect(result.totalTimeAvgMs).toBe(rounded(sum('totalTimeExecMs') / rows.length, 1));
    expect(result.totalTimeP50Ms).toBe(rounded(percentileCont(totals, 0.5) as number, 1));
    expect(result.totalTimeP95Ms).toBe(rounded(percentileCont(totals, 0.95) as number, 1));
    expect(result.totalTimeP99Ms).toBe(rounded(percentileCont(totals, 0.99) as number, 1));
    expect(result.llmTimePct).toBe(percent(sum('totalTimeLlmMs'), sum('totalTimeExecMs')));
    expect(result.toolTimePct).toBe(percent(sum('totalTimeToolMs'), sum('totalTimeExecMs')));
  });

  test('costs one statement', async () => {
    const count = await t.countStatements(() => summary('CLUSTER', { conId: 3 }));
    expect(count).toBe(1);
  });

  test('an empty set has a zero count and totals, and no time statistics', async () => {
    const result = await summary('CLUSTER', { minTotalTimeMs: 1e9 });
    expect(result).toMatchObject({
      executionCount: 0,
      totalTimeAvgMs: null,
      totalTimeP50Ms: null,
      totalTimeP95Ms: null,
      totalTimeP99Ms: null,
      totalTimeMaxMs: null,
      llmTimePct: null,
      toolTimePct: null,
    });
    expect(Object.values(result.totals).every((v) => v === 0)).toBe(true);
  });
});
