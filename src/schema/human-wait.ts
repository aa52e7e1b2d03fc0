import type { GraphQLResolveInfo } from 'graphql';
import { builder } from '../builder.js';
import type { Context } from '../context.js';
import { type GroupValue, plannedChild, RELATIONS } from '../model/plan.js';
import type { TaskRun, TeamRun, ToolCall } from '../model/team.js';
import { needs } from './needs.js';
import { TaskRunRef } from './task-run.js';
import { TeamRunRef } from './team-run.js';
import { ToolCallRef } from './tool-call.js';

/** What a run in WAITING_FOR_HUMAN waits for, from its task and tool history. */
export interface HumanWait {
  readonly run: TeamRun;
  readonly since: Date | null;
  readonly conversationId: string | null;
  readonly toolCall: ToolCall | null;
  readonly task: TaskRun | null;
}

const parsedJson = (text: string | null): unknown => {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

/**
 * The open tool call of a waiting run is the human one it is blocked on (the history has no
 * tool type; a run waits on one call at a time). Its task, else the task in
 * WAITING_FOR_HUMAN, else the run's last task, carries the conversation id. The tasks and
 * calls come from the field's plan (read with the run, src/schema/plan.ts) or, for a run no
 * plan reached, from the per-request loaders.
 */
export function humanWaitFrom(
  run: TeamRun,
  tasks: readonly TaskRun[],
  calls: readonly ToolCall[],
): HumanWait | null {
  if (run.state !== 'WAITING_FOR_HUMAN') return null;
  const open = calls.filter((call) => call.endDate === null);
  const toolCall = open.at(-1) ?? null;
  const task =
    (toolCall && tasks.find((t) => t.taskOrder === toolCall.taskOrder)) ??
    tasks.findLast((t) => t.state === 'WAITING_FOR_HUMAN') ??
    tasks.at(-1) ??
    null;
  const conversationId =
    task?.conversationId ?? tasks.find((t) => t.conversationId !== null)?.conversationId ?? null;
  const waitingTask = tasks.findLast((t) => t.state === 'WAITING_FOR_HUMAN');
  return {
    run,
    since: toolCall?.startDate ?? waitingTask?.startDate ?? run.waitingSince ?? null,
    conversationId,
    toolCall,
    task,
  };
}

/** What `run` waits for: planned with it, else read through the loaders. */
export async function humanWaitOf(
  run: TeamRun,
  context: Context,
  info: GraphQLResolveInfo,
): Promise<HumanWait | null> {
  const planned = plannedChild(run, info.fieldName) as GroupValue | undefined;
  if (planned) {
    return humanWaitFrom(run, planned.tasks as TaskRun[], planned.toolCalls as ToolCall[]);
  }
  if (run.state !== 'WAITING_FOR_HUMAN') return null;
  const [tasks, calls] = await Promise.all([
    context.loaders.tasksOfRun.load(run.execId),
    context.loaders.toolCallsOfRun.load(run.execId),
  ]);
  return humanWaitFrom(run, tasks, calls);
}

/** A run's waitingFor reads its tasks and tool calls (what humanWaitFrom always reads). */
export const waitingForNeeds = needs.group(
  { tasks: RELATIONS.runTasks, toolCalls: RELATIONS.runToolCalls },
  {
    tasks: ['taskOrder', 'state', 'conversationId', 'startDate'],
    toolCalls: ['taskOrder', 'startDate', 'endDate'],
  },
  ['state'],
);

export const HumanWaitRef = builder.objectRef<HumanWait>('HumanWait').implement({
  description:
    'What a run paused in WAITING_FOR_HUMAN waits for: the open HUMAN tool call (its question is the call’s INPUT), its task and agent, since when, and the conversation to answer (respondToHuman).',
  fields: (t) => ({
    since: t.expose('since', {
      type: 'DateTime',
      nullable: true,
      description:
        'When the run began waiting: the start of the open tool call, else of the task in WAITING_FOR_HUMAN, else (in subscriptions) the poll that first saw it waiting; null when none is known.',
      ...needs.members({}),
    }),
    conversationId: t.exposeString('conversationId', {
      nullable: true,
      description:
        'The conversation_id of the run’s task history (bare UUID): the conversation RUN_TEAM continues with the answer; null when not recorded.',
      ...needs.members({}),
    }),
    toolCall: t.field({
      type: ToolCallRef,
      nullable: true,
      description:
        'The open tool call the run is blocked on (END_DATE still NULL); null when the history shows none.',
      ...needs.member('toolCalls'),
      resolve: (wait) => wait.toolCall,
    }),
    toolName: t.string({
      nullable: true,
      description: 'TOOL_NAME of the open tool call (the HUMAN tool); null when there is none.',
      ...needs.members({ toolCalls: ['toolName'] }),
      resolve: (wait) => wait.toolCall?.toolName ?? null,
    }),
    agentName: t.string({
      nullable: true,
      description: 'The agent that asked: AGENT_NAME of the open call, else of the waiting task.',
      ...needs.members({ toolCalls: ['agentName'], tasks: ['agentName'] }),
      resolve: (wait) => wait.toolCall?.agentName ?? wait.task?.agentName ?? null,
    }),
    task: t.field({
      type: TaskRunRef,
      nullable: true,
      description:
        'The task that waits (the open call’s TASK_ORDER, else the task in WAITING_FOR_HUMAN, else the last task); null when the task history has no row.',
      ...needs.member('tasks'),
      resolve: (wait) => wait.task,
    }),
    question: t.string({
      nullable: true,
      description: 'The question put to the person: INPUT of the open tool call, as text.',
      ...needs.members({ toolCalls: ['input'] }),
      resolve: (wait) => wait.toolCall?.input ?? null,
    }),
    questionJson: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The question parsed as JSON when it is JSON; null otherwise.',
      ...needs.members({ toolCalls: ['input'] }),
      resolve: (wait) => parsedJson(wait.toolCall?.input ?? null),
    }),
  }),
});

builder.objectFields(TeamRunRef, (t) => ({
  waitingFor: t.field({
    type: HumanWaitRef,
    nullable: true,
    description:
      'What the run waits for while in WAITING_FOR_HUMAN (the question, the tool, task and agent, since when, the conversation id); null in any other state.',
    ...waitingForNeeds,
    resolve: (run, _args, context, info) => humanWaitOf(run, context, info),
  }),
}));
