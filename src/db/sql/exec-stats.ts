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
import { type Fragment, sql } from './fragment.js';
import { type PagedQuery, type PageWindow, paged } from './pages.js';
import { perCatalog, type Query, query } from './query.js';

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

/**
 * What a scope's statements read of its view, built once per catalog: the view, the time
 * columns and the select lists, the measures' columns checked against the catalog.
 */
function viewOf(catalog: Catalog, scope: ExecStatScope) {
  const view = scope === 'CLUSTER' ? catalog.execStatCluster : catalog.execStat;
  const column = (name: string) => sql.identifier(catalog, view, name);
  const exec = column(EXEC);
  const llm = column(LLM);
  const tool = column(TOOL);
  const measure = MEASURES.map((m) => column(m.column));
  const aliased = (item: (column: Fragment) => Fragment) =>
    sql.join(
      measure.map((c, i) => sql`${item(c)} AS ${sql.indexed(MEASURE_ALIAS, i)}`),
      ', ',
    );
  /** Total time not attributed to any node category (component times may also overlap). */
  const unattributed = sql`GREATEST(0, ${exec} - (${sql.join(
    MEASURES.flatMap((m, i) =>
      m.kind === 'nodeTime' && m.column !== EXEC ? [measure[i] as Fragment] : [],
    ),
    ' + ',
  )}))`;
  // Rows have no key; the tie-breakers keep offset pages stable.
  const tieBreakers = [
    sql`CON_ID`,
    ...(scope === 'CLUSTER' ? [sql`INST_ID`] : []),
    exec,
    llm,
    tool,
  ];
  const tieBreak = (direction: Fragment) =>
    sql.join(
      tieBreakers.map((c) => sql`${c} ${direction}`),
      ', ',
    );
  const order: Record<ExecStatOrderField, Fragment> = {
    TOTAL_TIME: exec,
    LLM_TIME: llm,
    TOOL_TIME: tool,
    LLM_TIME_PCT: pct(llm, exec),
    TOOL_TIME_PCT: pct(tool, exec),
    INPUT_TOKENS: sql`AGENT_EXECUTOR_INPUT_TOKENS`,
    OUTPUT_TOKENS: sql`AGENT_EXECUTOR_OUTPUT_TOKENS`,
    LLM_CALLS: sql`AGENT_EXECUTOR_LLM_CALL_COUNT`,
    TOOL_CALLS: sql`AGENT_EXECUTOR_TOOL_CALL_COUNT`,
  };
  return {
    view: sql.identifier(catalog, view),
    exec,
    order,
    tieBreak: { ASC: tieBreak(sql`ASC`), DESC: tieBreak(sql`DESC`) },
    rows: sql`${aliased((c) => c)},
          CON_ID, ${scope === 'CLUSTER' ? sql`INST_ID` : sql`NULL AS INST_ID`},
          ${pct(llm, exec)} AS LLM_TIME_PCT,
          ${pct(tool, exec)} AS TOOL_TIME_PCT,
          ${unattributed} AS UNATTRIBUTED_TIME_MS`,
    summary: sql`COUNT(*) AS EXECUTION_COUNT, ${aliased((c) => sql`SUM(${c})`)},
       AVG(${exec}) AS TOTAL_TIME_AVG_MS,
       PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY ${exec}) AS TOTAL_TIME_P50_MS,
       PERCENTILE_CONT(0.95) WITHIN GROUP (ORDER BY ${exec}) AS TOTAL_TIME_P95_MS,
       PERCENTILE_CONT(0.99) WITHIN GROUP (ORDER BY ${exec}) AS TOTAL_TIME_P99_MS,
       MAX(${exec}) AS TOTAL_TIME_MAX_MS,
       ${pct(sql`SUM(${llm})`, sql`SUM(${exec})`)} AS LLM_TIME_PCT,
       ${pct(sql`SUM(${tool})`, sql`SUM(${exec})`)} AS TOOL_TIME_PCT`,
  };
}

type ExecStatView = ReturnType<typeof viewOf>;

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
  return query(
    `execStats.summary.${scope.toLowerCase()}`,
    sql`SELECT ${v.summary} FROM ${source(v, filter)}`,
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
      const v = views[scope];
      return paged(
        `execStats.page.${scope.toLowerCase()}`,
        {
          select: v.rows,
          from: source(v, filter),
          orderBy: sql`${v.order[order.field]} ${sql.raw(order.direction)} NULLS LAST, ${v.tieBreak[order.direction]}`,
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
