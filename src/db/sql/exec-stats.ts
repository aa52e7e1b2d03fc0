import { type ExecStatOrderField, type ExecStatScope, MEASURES } from '../../model/exec-stat.js';
import type { Catalog } from '../catalog.js';
import type { Statement } from '../driver.js';
import { PAGE, perCatalog, statement, whereClause } from './statement.js';

/**
 * V$AGENT_EXEC_STAT (INSTANCE) and GV$AGENT_EXEC_STAT (CLUSTER). Measures are selected under
 * short aliases (M0, M1, …) because several Oracle column names exceed PostgreSQL's
 * 63-byte identifiers; `measureAlias` maps them back.
 */

export const measureAlias = (index: number) => `M${index}`;

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

export interface ExecStatQueryShape {
  readonly scope: ExecStatScope;
  readonly minTotalTime: boolean;
  readonly conId: boolean;
  readonly instId: boolean;
}

function source(catalog: Catalog, shape: ExecStatQueryShape): { view: string; where: string } {
  const conditions: string[] = [];
  if (shape.minTotalTime) conditions.push(`${EXEC} > :min_total_time`);
  if (shape.conId) conditions.push('CON_ID = :con_id');
  if (shape.instId) conditions.push('INST_ID = :inst_id');
  const view = shape.scope === 'CLUSTER' ? catalog.execStatCluster.name : catalog.execStat.name;
  return { view, where: whereClause(conditions) };
}

function shapeKey(shape: ExecStatQueryShape): string {
  return `${shape.scope}:${+shape.minTotalTime}${+shape.conId}${+shape.instId}`;
}

export const execStatSql = perCatalog((catalog: Catalog) => {
  const pages = new Map<string, Statement>();
  const summaries = new Map<string, Statement>();
  return {
    page(
      shape: ExecStatQueryShape,
      orderBy: ExecStatOrderField,
      direction: 'ASC' | 'DESC',
    ): Statement {
      const key = `${shapeKey(shape)}:${orderBy}:${direction}`;
      let built = pages.get(key);
      if (!built) {
        const { view, where } = source(catalog, shape);
        // Rows have no key; the tie-breakers keep offset pages stable.
        const tieBreak = [
          'CON_ID',
          ...(shape.scope === 'CLUSTER' ? ['INST_ID'] : []),
          EXEC,
          LLM,
          TOOL,
        ]
          .map((c) => `${c} ${direction}`)
          .join(', ');
        built = statement(
          `execStats.page.${shape.scope.toLowerCase()}`,
          `SELECT ${MEASURES.map((m, i) => `${m.column} AS ${measureAlias(i)}`).join(', ')},
             CON_ID, ${shape.scope === 'CLUSTER' ? 'INST_ID' : 'NULL AS INST_ID'},
             ${pct(LLM, EXEC)} AS LLM_TIME_PCT,
             ${pct(TOOL, EXEC)} AS TOOL_TIME_PCT,
             ${UNATTRIBUTED} AS UNATTRIBUTED_TIME_MS,
             COUNT(*) OVER () AS TOTAL_COUNT
           FROM ${view} ${where}
           ORDER BY ${ORDER_EXPRESSIONS[orderBy]} ${direction} NULLS LAST, ${tieBreak} ${PAGE}`,
        );
        pages.set(key, built);
      }
      return built;
    },
    summary(shape: ExecStatQueryShape): Statement {
      const key = shapeKey(shape);
      let built = summaries.get(key);
      if (!built) {
        const { view, where } = source(catalog, shape);
        const totals = MEASURES.map((m, i) => `SUM(${m.column}) AS ${measureAlias(i)}`).join(', ');
        built = statement(
          `execStats.summary.${shape.scope.toLowerCase()}`,
          `SELECT COUNT(*) AS EXECUTION_COUNT, ${totals},
             AVG(${EXEC}) AS TOTAL_TIME_AVG_MS,
             PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY ${EXEC}) AS TOTAL_TIME_P50_MS,
             PERCENTILE_CONT(0.95) WITHIN GROUP (ORDER BY ${EXEC}) AS TOTAL_TIME_P95_MS,
             PERCENTILE_CONT(0.99) WITHIN GROUP (ORDER BY ${EXEC}) AS TOTAL_TIME_P99_MS,
             MAX(${EXEC}) AS TOTAL_TIME_MAX_MS,
             ${pct(`SUM(${LLM})`, `SUM(${EXEC})`)} AS LLM_TIME_PCT,
             ${pct(`SUM(${TOOL})`, `SUM(${EXEC})`)} AS TOOL_TIME_PCT
           FROM ${view} ${where}`,
        );
        summaries.set(key, built);
      }
      return built;
    },
  };
});
