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

/** A measure's alias: this and its index in MEASURES (M0, M1, …). */
const MEASURE_ALIAS = 'M';

const EXEC = 'AGENT_EXECUTOR_TOTAL_TIME_EXEC';
const LLM = 'AGENT_EXECUTOR_TOTAL_TIME_LLM';
const TOOL = 'AGENT_EXECUTOR_TOTAL_TIME_TOOL';

const pct = (part: Fragment, total: Fragment) => sql`ROUND(100 * ${part} / NULLIF(${total}, 0), 1)`;

/** The view of a scope and its names: the measures' columns, checked against the catalog. */
function viewOf(catalog: Catalog, scope: ExecStatScope) {
  const view = scope === 'CLUSTER' ? catalog.execStatCluster : catalog.execStat;
  const column = (name: string) => sql.identifier(catalog, view, name);
  const exec = column(EXEC);
  const llm = column(LLM);
  const tool = column(TOOL);
  const measure = MEASURES.map((m) => column(m.column));
  const alias = MEASURES.map((_, i) => sql.indexed(MEASURE_ALIAS, i));
  return { view: sql.identifier(catalog, view), exec, llm, tool, measure, alias };
}

type ExecStatView = ReturnType<typeof viewOf>;

/** Total time not attributed to any node category (component times may also overlap). */
const unattributed = ({ exec, measure }: ExecStatView) =>
  sql`GREATEST(0, ${exec} - (${sql.join(
    MEASURES.flatMap((m, i) =>
      m.kind === 'nodeTime' && m.column !== EXEC ? [measure[i] as Fragment] : [],
    ),
    ' + ',
  )}))`;

const orderExpressions = (v: ExecStatView): Record<ExecStatOrderField, Fragment> => ({
  TOTAL_TIME: v.exec,
  LLM_TIME: v.llm,
  TOOL_TIME: v.tool,
  LLM_TIME_PCT: pct(v.llm, v.exec),
  TOOL_TIME_PCT: pct(v.tool, v.exec),
  INPUT_TOKENS: sql`AGENT_EXECUTOR_INPUT_TOKENS`,
  OUTPUT_TOKENS: sql`AGENT_EXECUTOR_OUTPUT_TOKENS`,
  LLM_CALLS: sql`AGENT_EXECUTOR_LLM_CALL_COUNT`,
  TOOL_CALLS: sql`AGENT_EXECUTOR_TOOL_CALL_COUNT`,
});

/** The view of a scope and the filters present, as a WHERE clause of binds. */
function source(v: ExecStatView, filter: ExecStatFilter): Fragment {
  const present = (value: number | null | undefined, condition: (v: number) => Fragment) =>
    value == null ? undefined : condition(value);
  return sql`${v.view} ${sql.where(
    present(filter.minTotalTimeMs, (n) => sql`${v.exec} > ${sql.bind('min_total_time', n)}`),
    present(filter.conId, (n) => sql`CON_ID = ${sql.bind('con_id', n)}`),
    present(filter.instId, (n) => sql`INST_ID = ${sql.bind('inst_id', n)}`),
  )}`;
}

function measures(row: Row): Record<string, number> {
  const values: Record<string, number> = {};
  MEASURES.forEach((m, i) => {
    values[m.field] = num(row[`${MEASURE_ALIAS}${i}`.toLowerCase()]);
  });
  return values;
}

function summaryOf<T>(
  v: ExecStatView,
  scope: ExecStatScope,
  filter: ExecStatFilter,
  decode: (row: Row) => T,
): Query<T> {
  const { exec, llm, tool } = v;
  const totals = sql.join(
    v.measure.map((column, i) => sql`SUM(${column}) AS ${v.alias[i] as Fragment}`),
    ', ',
  );
  return query(
    `execStats.summary.${scope.toLowerCase()}`,
    sql`SELECT COUNT(*) AS EXECUTION_COUNT, ${totals},
       AVG(${exec}) AS TOTAL_TIME_AVG_MS,
       PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY ${exec}) AS TOTAL_TIME_P50_MS,
       PERCENTILE_CONT(0.95) WITHIN GROUP (ORDER BY ${exec}) AS TOTAL_TIME_P95_MS,
       PERCENTILE_CONT(0.99) WITHIN GROUP (ORDER BY ${exec}) AS TOTAL_TIME_P99_MS,
       MAX(${exec}) AS TOTAL_TIME_MAX_MS,
       ${pct(sql`SUM(${llm})`, sql`SUM(${exec})`)} AS LLM_TIME_PCT,
       ${pct(sql`SUM(${tool})`, sql`SUM(${exec})`)} AS TOOL_TIME_PCT
     FROM ${source(v, filter)}`,
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

export const execStatSql = perCatalog((catalog: Catalog) => {
  const views: Record<ExecStatScope, ExecStatView> = {
    INSTANCE: viewOf(catalog, 'INSTANCE'),
    CLUSTER: viewOf(catalog, 'CLUSTER'),
  };
  return {
    /** A page of executions; past the last row, the summary's count is the total. */
    page(
      scope: ExecStatScope,
      filter: ExecStatFilter,
      order: ExecStatOrder,
      window: PageWindow,
    ): PagedQuery<ExecStat> {
      const direction = sql.raw(order.direction);
      const v = views[scope];
      // Rows have no key; the tie-breakers keep offset pages stable.
      const tieBreak = sql.join(
        [sql`CON_ID`, ...(scope === 'CLUSTER' ? [sql`INST_ID`] : []), v.exec, v.llm, v.tool].map(
          (c) => sql`${c} ${direction}`,
        ),
        ', ',
      );
      return paged(
        `execStats.page.${scope.toLowerCase()}`,
        {
          select: sql`${sql.join(
            v.measure.map((column, i) => sql`${column} AS ${v.alias[i] as Fragment}`),
            ', ',
          )},
          CON_ID, ${scope === 'CLUSTER' ? sql`INST_ID` : sql`NULL AS INST_ID`},
          ${pct(v.llm, v.exec)} AS LLM_TIME_PCT,
          ${pct(v.tool, v.exec)} AS TOOL_TIME_PCT,
          ${unattributed(v)} AS UNATTRIBUTED_TIME_MS`,
          from: source(v, filter),
          orderBy: sql`${orderExpressions(v)[order.field]} ${direction} NULLS LAST, ${tieBreak}`,
          count: summaryOf(v, scope, filter, (row) => num(row.executionCount)),
        },
        window,
        toExecStat,
      );
    },
    summary: (scope: ExecStatScope, filter: ExecStatFilter): Query<ExecStatSummary> =>
      summaryOf(views[scope], scope, filter, toSummary),
  };
});
