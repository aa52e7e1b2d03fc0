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
import { ADMIN_ONLY, ORDER_DIRECTION, STATS_ACCESS } from './descriptions.js';
import { connectionComplexity, offsetConnection, rootList } from './pagination.js';

const ExecStatScopeRef = builder.enumType('ExecStatScope', {
  description: 'Which runtime-statistics view to read (seed 002).',
  values: {
    INSTANCE: { description: 'V$AGENT_EXEC_STAT: the instance the API is connected to.' },
    CLUSTER: {
      description: `GV$AGENT_EXEC_STAT: every instance, with instId. ${ADMIN_ONLY}`,
    },
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
  description: 'The measure that orders execStats rows.',
  values: Object.fromEntries(
    Object.entries(ORDER_FIELDS).map(([name, what]) => [
      name,
      { description: `Order by ${what}.` },
    ]),
  ) as Record<ExecStatOrderField, { description: string }>,
});

export const OrderDirectionRef = builder.enumType('OrderDirection', {
  description: 'Sort direction.',
  values: {
    ASC: { description: 'Smallest (or earliest, or alphabetically first) first.' },
    DESC: { description: 'Largest (or latest, or alphabetically last) first.' },
  } as const,
});

const ExecStatOrderRef = builder.inputType('ExecStatOrder', {
  description: 'How to order execStats rows.',
  fields: (t) => ({
    field: t.field({
      type: ExecStatOrderFieldRef,
      required: true,
      description: 'The measure to order by.',
    }),
    direction: t.field({
      type: OrderDirectionRef,
      required: true,
      defaultValue: 'DESC',
      description: ORDER_DIRECTION,
    }),
  }),
});

const ExecStatFilterRef = builder.inputType('ExecStatFilter', {
  description: 'Which runtime-statistics rows to select; all given conditions apply.',
  fields: (t) => ({
    minTotalTimeMs: t.float({
      description:
        'Only executions whose total time exceeds this many milliseconds (seed 002: "> 2000").',
    }),
    conId: t.int({ description: 'Only rows of this container (CON_ID).' }),
    instId: t.int({
      description:
        'Only rows of this instance (INST_ID); needs scope CLUSTER, which is admin only (BAD_USER_INPUT in scope INSTANCE).',
    }),
  }),
});

const isWhole = (m: (typeof MEASURES)[number]) => m.kind === 'count' || m.kind === 'tokens';

const ExecStatRef = builder.objectRef<ExecStat>('ExecStat').implement({
  description:
    'One completed, successful Agent Spec execution (a V$/GV$AGENT_EXEC_STAT row, seed 002): node call counts, times in milliseconds and LLM tokens accumulated over that one execution. Failed executions leave no row; a row has no execution id or timestamp. Component times need not add up to totalTimeExecMs. A NULL measure column reads as 0.',
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
      description: 'CON_ID: the container of the row; null when the view reports none.',
      resolve: (s) => s.conId,
    }),
    instId: t.int({
      nullable: true,
      description:
        'INST_ID: the database instance of the row (GV$AGENT_EXEC_STAT); null in scope INSTANCE, whose view has no such column.',
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
      description:
        'AGENT_EXECUTOR_TOTAL_TIME_EXEC minus the node-category times, in milliseconds, never below 0: runtime work no category claims (overlapping concurrent work can hide it).',
      resolve: (s) => s.unattributedTimeMs,
    }),
  }),
});

const ExecStatTotalsRef = builder
  .objectRef<Readonly<Record<string, number>>>('ExecStatTotals')
  .implement({
    description:
      'Each measure summed over the selected executions (counts, milliseconds or tokens, like the ExecStat field of the same name); 0 when no row matches.',
    fields: (t) =>
      Object.fromEntries(
        MEASURES.map((m) => [
          m.field,
          t.float({
            description: `Sum of ${m.column}: ${m.description}`,
            resolve: (totals) => totals[m.field] ?? 0,
          }),
        ]),
      ),
  });

const ExecStatSummaryRef = builder.objectRef<ExecStatSummary>('ExecStatSummary').implement({
  description:
    'Aggregates over a filtered set of executions, computed by the database in one statement. Time aggregates are of AGENT_EXECUTOR_TOTAL_TIME_EXEC, in milliseconds, and null when no row matches.',
  fields: (t) => ({
    executionCount: t.exposeInt('executionCount', {
      description: 'Number of matching rows, i.e. of completed, successful executions.',
    }),
    totals: t.field({
      type: ExecStatTotalsRef,
      description: 'Every measure summed over the matching rows.',
      resolve: (s) => s.totals,
    }),
    totalTimeAvgMs: t.exposeFloat('totalTimeAvgMs', {
      nullable: true,
      description: 'Average total execution time.',
    }),
    totalTimeP50Ms: t.exposeFloat('totalTimeP50Ms', {
      nullable: true,
      description: 'Median total execution time (PERCENTILE_CONT 0.5, interpolated).',
    }),
    totalTimeP95Ms: t.exposeFloat('totalTimeP95Ms', {
      nullable: true,
      description: '95th percentile of total execution time (PERCENTILE_CONT 0.95).',
    }),
    totalTimeP99Ms: t.exposeFloat('totalTimeP99Ms', {
      nullable: true,
      description: '99th percentile of total execution time (PERCENTILE_CONT 0.99).',
    }),
    totalTimeMaxMs: t.exposeFloat('totalTimeMaxMs', {
      nullable: true,
      description: 'Longest total execution time.',
    }),
    llmTimePct: t.exposeFloat('llmTimePct', {
      nullable: true,
      description:
        'Summed LLM time as a percentage of summed total time, one decimal; null when that total is 0 or no row matches.',
    }),
    toolTimePct: t.exposeFloat('toolTimePct', {
      nullable: true,
      description:
        'Summed ToolNode time as a percentage of summed total time, one decimal; null when that total is 0 or no row matches.',
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

const SCOPE_ARG = 'The view to read: INSTANCE (V$, the default) or CLUSTER (GV$, admin only).';
const FILTER_ARG = 'Conditions on the rows; every row when not given.';

const ExecStatConnectionRef = builder.connectionObject({
  name: 'ExecStatConnection',
  type: ExecStatRef,
});

builder.queryFields((t) => ({
  execStats: t.field({
    ...rootList,
    type: ExecStatConnectionRef,
    description: `Runtime statistics rows (V$AGENT_EXEC_STAT, or GV$AGENT_EXEC_STAT in scope CLUSTER), slowest first unless ordered otherwise. ${STATS_ACCESS} The rows have no owner, so every reader sees all of them. Null with an error when the view cannot be read.`,
    authScopes: statsScopes,
    complexity: connectionComplexity,
    args: {
      ...t.arg.connectionArgs(),
      scope: t.arg({
        type: ExecStatScopeRef,
        required: true,
        defaultValue: 'INSTANCE',
        description: SCOPE_ARG,
      }),
      filter: t.arg({ type: ExecStatFilterRef, description: FILTER_ARG }),
      orderBy: t.arg({
        type: ExecStatOrderRef,
        description: 'The order of the rows; TOTAL_TIME DESC when not given.',
      }),
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
    description: `Count, totals and total-time average, percentiles and maximum over the filtered rows of V$AGENT_EXEC_STAT (GV$ in scope CLUSTER). ${STATS_ACCESS} Null with an error when the view cannot be read.`,
    authScopes: statsScopes,
    args: {
      scope: t.arg({
        type: ExecStatScopeRef,
        required: true,
        defaultValue: 'INSTANCE',
        description: SCOPE_ARG,
      }),
      filter: t.arg({ type: ExecStatFilterRef, description: FILTER_ARG }),
    },
    resolve: (_root, args, context) =>
      context.repositories.execStats.summary(args.scope, checkFilter(args.scope, args.filter)),
  }),
}));
