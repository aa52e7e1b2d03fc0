import {
  type ExecStat,
  type ExecStatFilter,
  type ExecStatOrder,
  type ExecStatOrderField,
  type ExecStatScope,
  type ExecStatSummary,
  MEASURES,
} from '../../model/exec-stat.js';
import type { Catalog } from '../catalog.js';
import type { Row } from '../driver.js';
import { num, numOrNull, roundedOrNull } from '../rows.js';
import type { Fragment, PagedQuery, PageWindow, Query } from './statement.js';
import { paged, perCatalog, query, sql } from './statement.js';

/**
 * V$AGENT_EXEC_STAT (INSTANCE) and GV$AGENT_EXEC_STAT (CLUSTER). Measures are selected under
 * short aliases (M0, M1, …) because several Oracle column names exceed PostgreSQL's
 * 63-byte identifiers; the decoders below map them back.
 */

const measureAlias = (index: number) => `M${index}`;

const EXEC = 'AGENT_EXECUTOR_TOTAL_TIME_EXEC';
const LLM = 'AGENT_EXECUTOR_TOTAL_TIME_LLM';
const TOOL = 'AGENT_EXECUTOR_TOTAL_TIME_TOOL';

const pct = (part: string, total: string) => `ROUND(100 * ${part} / NULLIF(${total}, 0), 1)`;

/** Total time not attributed to any node category (component times may also overlap). */
const UNATTRIBUTED = `GREATEST(0, ${EXEC} - (${MEASURES.filter(
  (m) => m.kind === 'nodeTime' && m.column !== EXEC,
)
  .map((m) => m.column)
  .join(' + ')}))`;

const ORDER_EXPRESSIONS: Record<ExecStatOrderField, string> = {
  TOTAL_TIME: EXEC,
  LLM_TIME: LLM,
  TOOL_TIME: TOOL,
  LLM_TIME_PCT: pct(LLM, EXEC),
  TOOL_TIME_PCT: pct(TOOL, EXEC),
  INPUT_TOKENS: 'AGENT_EXECUTOR_INPUT_TOKENS',
  OUTPUT_TOKENS: 'AGENT_EXECUTOR_OUTPUT_TOKENS',
  LLM_CALLS: 'AGENT_EXECUTOR_LLM_CALL_COUNT',
  TOOL_CALLS: 'AGENT_EXECUTOR_TOOL_CALL_COUNT',
};

/** The view of a scope and the filters present, as a WHERE clause of binds. */
function source(catalog: Catalog, scope: ExecStatScope, filter: ExecStatFilter): Fragment {
  const view = scope === 'CLUSTER' ? catalog.execStatCluster.name : catalog.execStat.name;
  const present = (value: number | null | undefined, condition: (v: number) => Fragment) =>
    value == null ? undefined : condition(value);
  return sql`${view} ${sql.where(
    present(filter.minTotalTimeMs, (v) => sql`${EXEC} > ${sql.bind('min_total_time', v)}`),
    present(filter.conId, (v) => sql`CON_ID = ${sql.bind('con_id', v)}`),
    present(filter.instId, (v) => sql`INST_ID = ${sql.bind('inst_id', v)}`),
  )}`;
}

function measures(row: Row): Record<string, number> {
  const values: Record<string, number> = {};
  MEASURES.forEach((m, i) => {
    values[m.field] = num(row[measureAlias(i).toLowerCase()]);
  });
  return values;
}

function summaryOf<T>(
  catalog: Catalog,
  scope: ExecStatScope,
  filter: ExecStatFilter,
  decode: (row: Row) => T,
): Query<T> {
  const totals = MEASURES.map((m, i) => `SUM(${m.column}) AS ${measureAlias(i)}`).join(', ');
  return query(
    `execStats.summary.${scope.toLowerCase()}`,
    sql`SELECT COUNT(*) AS EXECUTION_COUNT, ${totals},
       AVG(${EXEC}) AS TOTAL_TIME_AVG_MS,
       PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY ${EXEC}) AS TOTAL_TIME_P50_MS,
       PERCENTILE_CONT(0.95) WITHIN GROUP (ORDER BY ${EXEC}) AS TOTAL_TIME_P95_MS,
       PERCENTILE_CONT(0.99) WITHIN GROUP (ORDER BY ${EXEC}) AS TOTAL_TIME_P99_MS,
       MAX(${EXEC}) AS TOTAL_TIME_MAX_MS,
       ${pct(`SUM(${LLM})`, `SUM(${EXEC})`)} AS LLM_TIME_PCT,
       ${pct(`SUM(${TOOL})`, `SUM(${EXEC})`)} AS TOOL_TIME_PCT
     FROM ${source(catalog, scope, filter)}`,
    decode,
  );
}

function toSummary(row: Row): ExecStatSummary {
  return {
    executionCount: num(row.executionCount),
    totals: measures(row),
    totalTimeAvgMs: roundedOrNull(row.totalTimeAvgMs, 1),
    totalTimeP50Ms: roundedOrNull(row.totalTimeP50Ms, 1),
    totalTimeP95Ms: roundedOrNull(row.totalTimeP95Ms, 1),
    totalTimeP99Ms: roundedOrNull(row.totalTimeP99Ms, 1),
    totalTimeMaxMs: numOrNull(row.totalTimeMaxMs),
    llmTimePct: numOrNull(row.llmTimePct),
    toolTimePct: numOrNull(row.toolTimePct),
  };
}

function toExecStat(row: Row): ExecStat {
  return {
    measures: measures(row),
    conId: numOrNull(row.conId),
    instId: numOrNull(row.instId),
    llmTimePct: numOrNull(row.llmTimePct),
    toolTimePct: numOrNull(row.toolTimePct),
    unattributedTimeMs: num(row.unattributedTimeMs),
  };
}

export const execStatSql = perCatalog((catalog: Catalog) => ({
  /** A page of executions; past the last row, the summary's count is the total. */
  page(
    scope: ExecStatScope,
    filter: ExecStatFilter,
    order: ExecStatOrder,
    window: PageWindow,
  ): PagedQuery<ExecStat> {
    const { direction } = order;
    // Rows have no key; the tie-breakers keep offset pages stable.
    const tieBreak = ['CON_ID', ...(scope === 'CLUSTER' ? ['INST_ID'] : []), EXEC, LLM, TOOL]
      .map((c) => `${c} ${direction}`)
      .join(', ');
    return paged(
      `execStats.page.${scope.toLowerCase()}`,
      {
        select: `${MEASURES.map((m, i) => `${m.column} AS ${measureAlias(i)}`).join(', ')},
          CON_ID, ${scope === 'CLUSTER' ? 'INST_ID' : 'NULL AS INST_ID'},
          ${pct(LLM, EXEC)} AS LLM_TIME_PCT,
          ${pct(TOOL, EXEC)} AS TOOL_TIME_PCT,
          ${UNATTRIBUTED} AS UNATTRIBUTED_TIME_MS`,
        from: source(catalog, scope, filter),
        orderBy: `${ORDER_EXPRESSIONS[order.field]} ${direction} NULLS LAST, ${tieBreak}`,
        count: summaryOf(catalog, scope, filter, (row) => num(row.executionCount)),
      },
      window,
      toExecStat,
    );
  },
  summary: (scope: ExecStatScope, filter: ExecStatFilter): Query<ExecStatSummary> =>
    summaryOf(catalog, scope, filter, toSummary),
}));
