import { builder } from '../builder.js';
import { badUserInput } from '../errors.js';
import {
  type ExecStat,
  type ExecStatFilter,
  type ExecStatOrderField,
  type ExecStatScope,
  type ExecStatSummary,
  MEASURES,
} from '../model/exec-stat.js';
import { connectionComplexity, offsetConnection, rootList } from './pagination.js';

const ExecStatScopeRef = builder.enumType('ExecStatScope', {
  values: {
    INSTANCE: { description: 'V$AGENT_EXEC_STAT: the instance the API is connected to.' },
    CLUSTER: { description: 'GV$AGENT_EXEC_STAT: every instance, with instId.' },
  } as const,
});

const ORDER_FIELDS: Record<ExecStatOrderField, string> = {
  TOTAL_TIME: 'AGENT_EXECUTOR_TOTAL_TIME_EXEC',
  LLM_TIME: 'AGENT_EXECUTOR_TOTAL_TIME_LLM',
  TOOL_TIME: 'AGENT_EXECUTOR_TOTAL_TIME_TOOL',
  LLM_TIME_PCT: 'the LLM share of total time',
  TOOL_TIME_PCT: 'the ToolNode share of total time',
  INPUT_TOKENS: 'AGENT_EXECUTOR_INPUT_TOKENS',
  OUTPUT_TOKENS: 'AGENT_EXECUTOR_OUTPUT_TOKENS',
  LLM_CALLS: 'AGENT_EXECUTOR_LLM_CALL_COUNT',
  TOOL_CALLS: 'AGENT_EXECUTOR_TOOL_CALL_COUNT',
};

const ExecStatOrderFieldRef = builder.enumType('ExecStatOrderField', {
  values: Object.fromEntries(
    Object.entries(ORDER_FIELDS).map(([name, what]) => [
      name,
      { description: `Order by ${what}.` },
    ]),
  ) as Record<ExecStatOrderField, { description: string }>,
});

export const OrderDirectionRef = builder.enumType('OrderDirection', {
  values: ['ASC', 'DESC'] as const,
});

const ExecStatOrderRef = builder.inputType('ExecStatOrder', {
  fields: (t) => ({
    field: t.field({ type: ExecStatOrderFieldRef, required: true }),
    direction: t.field({ type: OrderDirectionRef, required: true, defaultValue: 'DESC' }),
  }),
});

const ExecStatFilterRef = builder.inputType('ExecStatFilter', {
  fields: (t) => ({
    minTotalTimeMs: t.float({
      description:
        'Only executions whose total time exceeds this many milliseconds (seed 002: "> 2000").',
    }),
    conId: t.int({ description: 'Only rows of this container (CON_ID).' }),
    instId: t.int({ description: 'Only rows of this instance (INST_ID); needs scope CLUSTER.' }),
  }),
});

const isWhole = (m: (typeof MEASURES)[number]) => m.kind === 'count' || m.kind === 'tokens';

const ExecStatRef = builder.objectRef<ExecStat>('ExecStat').implement({
  description:
    'One completed, successful Agent Spec execution (a V$/GV$AGENT_EXEC_STAT row). Times are milliseconds.',
  fields: (t) => ({
    ...Object.fromEntries(
      MEASURES.map((m) => [
        m.field,
        isWhole(m)
          ? t.int({
              description: `${m.column}: ${m.description}`,
              resolve: (s) => s.measures[m.field] ?? 0,
            })
          : t.float({
              description: `${m.column}: ${m.description}`,
              resolve: (s) => s.measures[m.field] ?? 0,
            }),
      ]),
    ),
    conId: t.int({
      nullable: true,
      description: 'CON_ID: the container of the row.',
      resolve: (s) => s.conId,
    }),
    instId: t.int({
      nullable: true,
      description: 'INST_ID: the instance of the row (CLUSTER scope only).',
      resolve: (s) => s.instId,
    }),
    llmTimePct: t.float({
      nullable: true,
      description:
        'LLM time as a percentage of total time, one decimal; null when total time is 0.',
      resolve: (s) => s.llmTimePct,
    }),
    toolTimePct: t.float({
      nullable: true,
      description:
        'ToolNode time as a percentage of total time, one decimal; null when total time is 0.',
      resolve: (s) => s.toolTimePct,
    }),
    unattributedTimeMs: t.float({
      description: 'Total time not attributed to any node category (never below 0).',
      resolve: (s) => s.unattributedTimeMs,
    }),
  }),
});

const ExecStatTotalsRef = builder
  .objectRef<Readonly<Record<string, number>>>('ExecStatTotals')
  .implement({
    description: 'Each measure summed over the selected executions.',
    fields: (t) =>
      Object.fromEntries(
        MEASURES.map((m) => [
          m.field,
          t.float({
            description: `Sum of ${m.column}.`,
            resolve: (totals) => totals[m.field] ?? 0,
          }),
        ]),
      ),
  });

const ExecStatSummaryRef = builder.objectRef<ExecStatSummary>('ExecStatSummary').implement({
  description: 'Aggregates over a filtered set of executions, computed by the database.',
  fields: (t) => ({
    executionCount: t.exposeInt('executionCount'),
    totals: t.field({ type: ExecStatTotalsRef, resolve: (s) => s.totals }),
    totalTimeAvgMs: t.exposeFloat('totalTimeAvgMs', { nullable: true }),
    totalTimeP50Ms: t.exposeFloat('totalTimeP50Ms', { nullable: true }),
    totalTimeP95Ms: t.exposeFloat('totalTimeP95Ms', { nullable: true }),
    totalTimeP99Ms: t.exposeFloat('totalTimeP99Ms', { nullable: true }),
    totalTimeMaxMs: t.exposeFloat('totalTimeMaxMs', { nullable: true }),
    llmTimePct: t.exposeFloat('llmTimePct', {
      nullable: true,
      description: 'Summed LLM time as a percentage of summed total time.',
    }),
    toolTimePct: t.exposeFloat('toolTimePct', {
      nullable: true,
      description: 'Summed ToolNode time as a percentage of summed total time.',
    }),
  }),
});

/** Statistics have no owner: readers need the statsReader scope, GV$ (CLUSTER) needs admin. */
const statsScopes = (_root: unknown, args: { scope: ExecStatScope }) =>
  args.scope === 'CLUSTER' ? { admin: true } : { statsReader: true };

function checkFilter(
  scope: ExecStatScope,
  filter: ExecStatFilter | null | undefined,
): ExecStatFilter {
  if (filter?.instId != null && scope !== 'CLUSTER') {
    throw badUserInput(
      'Argument "filter.instId" needs scope: CLUSTER (V$AGENT_EXEC_STAT has no INST_ID)',
    );
  }
  return filter ?? {};
}

const ExecStatConnectionRef = builder.connectionObject({
  name: 'ExecStatConnection',
  type: ExecStatRef,
});

builder.queryFields((t) => ({
  execStats: t.field({
    ...rootList,
    type: ExecStatConnectionRef,
    description:
      'Runtime statistics rows, slowest first unless ordered otherwise. Admins only (or everyone with STATS_PUBLIC); CLUSTER scope is admin-only.',
    authScopes: statsScopes,
    complexity: connectionComplexity,
    args: {
      ...t.arg.connectionArgs(),
      scope: t.arg({ type: ExecStatScopeRef, required: true, defaultValue: 'INSTANCE' }),
      filter: t.arg({ type: ExecStatFilterRef }),
      orderBy: t.arg({ type: ExecStatOrderRef }),
    },
    resolve: (_root, args, context) =>
      offsetConnection(args, (offset, limit) =>
        context.repositories.execStats.page(
          args.scope,
          checkFilter(args.scope, args.filter),
          args.orderBy ?? { field: 'TOTAL_TIME', direction: 'DESC' },
          offset,
          limit,
        ),
      ),
  }),
  execStatSummary: t.field({
    ...rootList,
    type: ExecStatSummaryRef,
    description:
      'Count, totals and total-time average, percentiles and maximum over the filtered rows. Same access as execStats.',
    authScopes: statsScopes,
    args: {
      scope: t.arg({ type: ExecStatScopeRef, required: true, defaultValue: 'INSTANCE' }),
      filter: t.arg({ type: ExecStatFilterRef }),
    },
    resolve: (_root, args, context) =>
      context.repositories.execStats.summary(args.scope, checkFilter(args.scope, args.filter)),
  }),
}));
