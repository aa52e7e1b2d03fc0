import { builder } from '../builder.js';
import { RELATIONS } from '../model/plan.js';
import { durationMs, type ToolCall } from '../model/team.js';
import { TOOL_CALL_ORDER_KEYS } from '../repositories/team-history.js';
import { bounded, KEY, ORACLE_NAME } from './bounds.js';
import { HISTORY, NULL_WHEN_VIEW_NOT_GRANTED, VISIBILITY } from './descriptions.js';
import { nodeByKey, notFoundAs } from './lookup.js';
import { needs } from './needs.js';
import { connectionComplexity, keysetConnection, rootList } from './pagination.js';
import { plannedOr, planOf } from './plan.js';
import { TaskRunRef } from './task-run.js';
import { TeamRunRef } from './team-run.js';

export const ToolCallRef = nodeByKey<ToolCall>('ToolCall', {
  id: (call) => call.invocationId,
  idNeeds: needs.call('invocationId'),
  loader: (context, info) =>
    info
      ? context.loaders.plannedToolCallById(planOf(info, 'ToolCall'))
      : context.loaders.toolCallById,
  missing: notFoundAs((id) => `No tool call with invocationId "${id}"`),
}).ref;

ToolCallRef.implement({
  description:
    'One tool invocation (a row of USER_/DBA_AI_AGENT_TOOL_HISTORY, seed 003): which tool, called by which agent and task of which team run, with its input and output.',
  fields: (t) => ({
    invocationId: t.exposeID('invocationId', {
      description: 'INVOCATION_ID: the unique id of the call.',
      ...needs.call('invocationId'),
    }),
    teamExecId: t.exposeID('teamExecId', {
      description: HISTORY.teamExecId,
      ...needs.call('teamExecId'),
    }),
    taskOrder: t.exposeInt('taskOrder', {
      nullable: true,
      description: `${HISTORY.taskOrder} Null when not recorded.`,
      ...needs.call('taskOrder'),
    }),
    taskRun: t.field({
      type: TaskRunRef,
      nullable: true,
      description:
        'The task run that made the call (same TEAM_EXEC_ID and TASK_ORDER); null when it is not in the task history or not visible.',
      ...needs.relation(RELATIONS.callTaskRun),
      resolve: plannedOr(async (call, context) => {
        const tasks = await context.loaders.tasksOfRun.load(call.teamExecId);
        return tasks.find((task) => task.taskOrder === call.taskOrder) ?? null;
      }),
    }),
    toolOwner: t.exposeString('toolOwner', {
      nullable: true,
      description:
        'TOOL_OWNER: the schema that owns the tool; the session user when reading the USER_ view (which has no such column) or when the row records none.',
      ...needs.call('toolOwner'),
    }),
    toolName: t.exposeString('toolName', {
      nullable: true,
      description: 'TOOL_NAME: the tool called; null when not recorded.',
      ...needs.call('toolName'),
    }),
    agentName: t.exposeString('agentName', {
      nullable: true,
      description: 'AGENT_NAME: the agent that called the tool; null when not recorded.',
      ...needs.call('agentName'),
    }),
    taskName: t.exposeString('taskName', {
      nullable: true,
      description: 'TASK_NAME: the task that ran the tool; null when not recorded.',
      ...needs.call('taskName'),
    }),
    startDate: t.expose('startDate', {
      type: 'DateTime',
      nullable: true,
      description: HISTORY.startDate,
      ...needs.call('startDate'),
    }),
    endDate: t.expose('endDate', {
      type: 'DateTime',
      nullable: true,
      description: `${HISTORY.endDate} A HUMAN tool call stays open while the run waits for a person.`,
      ...needs.call('endDate'),
    }),
    durationMs: t.float({
      nullable: true,
      description: HISTORY.durationMs,
      resolve: (call) => durationMs(call.startDate, call.endDate),
      ...needs.call('startDate', 'endDate'),
    }),
    input: t.exposeString('input', {
      nullable: true,
      description: 'INPUT (CLOB): the input data of the tool, as text; null when not recorded.',
      ...needs.call('input'),
    }),
    output: t.exposeString('output', {
      nullable: true,
      description:
        'OUTPUT (CLOB): the output of the tool (text, JSON, rows or a status message), as text; null while running or when it produced none.',
      ...needs.call('output'),
    }),
    toolOutput: t.exposeString('toolOutput', {
      nullable: true,
      description:
        'TOOL_OUTPUT (CLOB): diagnostic messages of the tool function, for debugging and tracing; null when there are none.',
      ...needs.call('toolOutput'),
    }),
  }),
});

builder.objectFields(TeamRunRef, (t) => ({
  toolCalls: t.field({
    type: [ToolCallRef],
    description: 'Every tool call of the run, by task order then start.',
    ...needs.relation(RELATIONS.runToolCalls),
    resolve: plannedOr((run, context) => context.loaders.toolCallsOfRun.load(run.execId)),
  }),
}));

builder.objectFields(TaskRunRef, (t) => ({
  toolCalls: t.field({
    type: [ToolCallRef],
    description: 'The calls made by this task (same TEAM_EXEC_ID and TASK_ORDER).',
    ...needs.relation(RELATIONS.taskToolCalls),
    resolve: plannedOr(async (task, context) =>
      (await context.loaders.toolCallsOfRun.load(task.teamExecId)).filter(
        (call) => call.taskOrder === task.taskOrder,
      ),
    ),
  }),
}));

const ToolCallFilterRef = builder.inputType('ToolCallFilter', {
  description: 'Which tool calls to list; all given conditions apply.',
  fields: (t) => ({
    toolName: t.string(bounded(ORACLE_NAME, 'Only calls of this tool (TOOL_NAME, exact).')),
    agentName: t.string(bounded(ORACLE_NAME, 'Only calls by this agent (AGENT_NAME, exact).')),
    teamExecId: t.id(bounded(KEY, 'Only calls of this team run (TEAM_EXEC_ID).')),
  }),
});

const ToolCallConnectionRef = builder.connectionObject({
  name: 'ToolCallConnection',
  type: ToolCallRef,
});

builder.queryFields((t) => ({
  toolCalls: t.field({
    ...rootList,
    type: ToolCallConnectionRef,
    description: `Tool calls across runs (USER_/DBA_AI_AGENT_TOOL_HISTORY), newest first (calls without a start last), ties by invocationId. A cursor holds its call's place in that order, so calls made while pages are read shift no page. ${VISIBILITY} ${NULL_WHEN_VIEW_NOT_GRANTED}`,
    complexity: connectionComplexity,
    args: {
      ...t.arg.connectionArgs(),
      filter: t.arg({
        type: ToolCallFilterRef,
        description: 'Conditions on the calls; every call when not given.',
      }),
    },
    resolve: (_root, args, context, info) => {
      const filter = args.filter
        ? {
            ...args.filter,
            teamExecId: args.filter.teamExecId == null ? null : String(args.filter.teamExecId),
          }
        : {};
      return keysetConnection(
        args,
        { name: 'toolCalls', keys: TOOL_CALL_ORDER_KEYS },
        info,
        (window) =>
          context.repositories.history.plannedCallsPage(filter, window, planOf(info, 'ToolCall')),
      );
    },
  }),
}));
