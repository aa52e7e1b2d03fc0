import { builder } from '../builder.js';
import { loadNow } from '../loaders.js';
import { durationMs, type ToolCall } from '../model/team.js';
import { TOOL_CALL_ORDER_KEYS } from '../repositories/team-history.js';
import { bounded, KEY, ORACLE_NAME } from './bounds.js';
import { HISTORY, NULL_WHEN_VIEW_NOT_GRANTED, VISIBILITY } from './descriptions.js';
import { toolCallReading } from './history-reading.js';
import { nodeByKey, notFoundAs } from './lookup.js';
import { connectionComplexity, keysetConnection, rootList } from './pagination.js';
import { TaskRunRef } from './task-run.js';
import { TeamRunRef } from './team-run.js';

export const ToolCallRef = nodeByKey<ToolCall>('ToolCall', {
  id: (call) => call.invocationId,
  loader: (context) => context.loaders.toolCallById,
  missing: notFoundAs((id) => `No tool call with invocationId "${id}"`),
}).ref;

ToolCallRef.implement({
  description:
    'One tool invocation (a row of USER_/DBA_AI_AGENT_TOOL_HISTORY, seed 003): which tool, called by which agent and task of which team run, with its input and output.',
  fields: (t) => ({
    invocationId: t.exposeID('invocationId', {
      description: 'INVOCATION_ID: the unique id of the call.',
    }),
    teamExecId: t.exposeID('teamExecId', { description: HISTORY.teamExecId }),
    taskOrder: t.exposeInt('taskOrder', {
      nullable: true,
      description: `${HISTORY.taskOrder} Null when not recorded.`,
    }),
    taskRun: t.field({
      type: TaskRunRef,
      nullable: true,
      description:
        'The task run that made the call (same TEAM_EXEC_ID and TASK_ORDER); null when it is not in the task history or not visible.',
      resolve: async (call, _args, context) => {
        const tasks = await context.loaders.tasksOfRun.load(call.teamExecId);
        return tasks.find((task) => task.taskOrder === call.taskOrder) ?? null;
      },
    }),
    toolOwner: t.exposeString('toolOwner', {
      nullable: true,
      description:
        'TOOL_OWNER: the schema that owns the tool; the session user when reading the USER_ view (which has no such column) or when the row records none.',
    }),
    toolName: t.exposeString('toolName', {
      nullable: true,
      description: 'TOOL_NAME: the tool called; null when not recorded.',
    }),
    agentName: t.exposeString('agentName', {
      nullable: true,
      description: 'AGENT_NAME: the agent that called the tool; null when not recorded.',
    }),
    taskName: t.exposeString('taskName', {
      nullable: true,
      description: 'TASK_NAME: the task that ran the tool; null when not recorded.',
    }),
    startDate: t.expose('startDate', {
      type: 'DateTime',
      nullable: true,
      description: HISTORY.startDate,
    }),
    endDate: t.expose('endDate', {
      type: 'DateTime',
      nullable: true,
      description: `${HISTORY.endDate} A HUMAN tool call stays open while the run waits for a person.`,
    }),
    durationMs: t.float({
      nullable: true,
      description: HISTORY.durationMs,
      resolve: (call) => durationMs(call.startDate, call.endDate),
    }),
    input: t.exposeString('input', {
      nullable: true,
      description: 'INPUT (CLOB): the input data of the tool, as text; null when not recorded.',
    }),
    output: t.exposeString('output', {
      nullable: true,
      description:
        'OUTPUT (CLOB): the output of the tool (text, JSON, rows or a status message), as text; null while running or when it produced none.',
    }),
    toolOutput: t.exposeString('toolOutput', {
      nullable: true,
      description:
        'TOOL_OUTPUT (CLOB): diagnostic messages of the tool function, for debugging and tracing; null when there are none.',
    }),
  }),
});

builder.objectFields(TeamRunRef, (t) => ({
  toolCalls: t.field({
    type: [ToolCallRef],
    description: 'Every tool call of the run, by task order then start.',
    resolve: (run, _args, context, info) =>
      loadNow(context.loaders.toolCallsOfRunReading(toolCallReading(info)), run.execId),
  }),
}));

builder.objectFields(TaskRunRef, (t) => ({
  toolCalls: t.field({
    type: [ToolCallRef],
    description: 'The calls made by this task (same TEAM_EXEC_ID and TASK_ORDER).',
    resolve: (task, _args, context, info) => {
      const ofTask = (calls: readonly ToolCall[]) =>
        calls.filter((call) => call.taskOrder === task.taskOrder);
      const calls = loadNow(
        context.loaders.toolCallsOfRunReading(toolCallReading(info)),
        task.teamExecId,
      );
      return calls instanceof Promise ? calls.then(ofTask) : ofTask(calls);
    },
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
    resolve: (_root, args, context) => {
      const filter = args.filter
        ? {
            ...args.filter,
            teamExecId: args.filter.teamExecId == null ? null : String(args.filter.teamExecId),
          }
        : {};
      return keysetConnection(args, { name: 'toolCalls', keys: TOOL_CALL_ORDER_KEYS }, (window) =>
        context.repositories.history.toolCallPage(filter, window),
      );
    },
  }),
}));
