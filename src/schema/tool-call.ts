import { builder } from '../builder.js';
import { durationMs, type ToolCall } from '../model/team.js';
import { lookup } from './lookup.js';
import { connectionComplexity, offsetConnection, rootList } from './pagination.js';
import { TaskRunRef } from './task-run.js';
import { TeamRunRef } from './team-run.js';

export const ToolCallRef = builder.nodeRef<ToolCall>('ToolCall', {
  id: { resolve: (call) => call.invocationId },
  loadManyWithoutCache: lookup(
    (context) => context.loaders.toolCallById,
    (id) => `No tool call with invocationId "${id}"`,
  ).many,
});

ToolCallRef.implement({
  description: 'One tool invocation (a row of USER_/DBA_AI_AGENT_TOOL_HISTORY).',
  fields: (t) => ({
    invocationId: t.exposeID('invocationId'),
    teamExecId: t.exposeID('teamExecId'),
    taskOrder: t.exposeInt('taskOrder', { nullable: true }),
    taskRun: t.field({
      type: TaskRunRef,
      nullable: true,
      resolve: async (call, _args, context) => {
        const tasks = await context.loaders.tasksOfRun.load(call.teamExecId);
        return tasks.find((task) => task.taskOrder === call.taskOrder) ?? null;
      },
    }),
    toolOwner: t.exposeString('toolOwner', { nullable: true }),
    toolName: t.exposeString('toolName', { nullable: true }),
    agentName: t.exposeString('agentName', { nullable: true }),
    taskName: t.exposeString('taskName', { nullable: true }),
    startDate: t.expose('startDate', { type: 'DateTime', nullable: true }),
    endDate: t.expose('endDate', { type: 'DateTime', nullable: true }),
    durationMs: t.float({
      nullable: true,
      resolve: (call) => durationMs(call.startDate, call.endDate),
    }),
    input: t.exposeString('input', { nullable: true }),
    output: t.exposeString('output', { nullable: true }),
    toolOutput: t.exposeString('toolOutput', {
      nullable: true,
      description: 'Diagnostic messages of the tool function.',
    }),
  }),
});

builder.objectFields(TeamRunRef, (t) => ({
  toolCalls: t.field({
    type: [ToolCallRef],
    description: 'Every tool call of the run, by task order then start.',
    resolve: (run, _args, context) => context.loaders.toolCallsOfRun.load(run.execId),
  }),
}));

builder.objectFields(TaskRunRef, (t) => ({
  toolCalls: t.field({
    type: [ToolCallRef],
    description: 'The calls made by this task (same TEAM_EXEC_ID and TASK_ORDER).',
    resolve: async (task, _args, context) => {
      const calls = await context.loaders.toolCallsOfRun.load(task.teamExecId);
      return calls.filter((call) => call.taskOrder === task.taskOrder);
    },
  }),
}));

const ToolCallFilterRef = builder.inputType('ToolCallFilter', {
  fields: (t) => ({
    toolName: t.string(),
    agentName: t.string(),
    teamExecId: t.id(),
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
    description: 'Tool calls across runs, newest first.',
    complexity: connectionComplexity,
    args: { ...t.arg.connectionArgs(), filter: t.arg({ type: ToolCallFilterRef }) },
    resolve: (_root, args, context) => {
      const filter = args.filter
        ? {
            ...args.filter,
            teamExecId: args.filter.teamExecId == null ? null : String(args.filter.teamExecId),
          }
        : {};
      return offsetConnection(args, (offset, limit) =>
        context.repositories.history.toolCallPage(filter, offset, limit),
      );
    },
  }),
}));
