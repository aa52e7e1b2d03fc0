import { builder } from '../builder.js';
import { notFound } from '../errors.js';
import { RELATIONS } from '../model/plan.js';
import { durationMs, type LlmPrompt, type TaskFailure, type TaskRun } from '../model/team.js';
import { AgentRef } from './agent.js';
import { HISTORY } from './descriptions.js';
import { needs } from './needs.js';
import { connectionComplexity, offsetConnection } from './pagination.js';
import { plannedOr, planOf, unplannedFields } from './plan.js';
import { selectsAny } from './selection.js';
import { TeamRunStateRef } from './team.js';
import { TeamRunRef } from './team-run.js';

/** TEAM_EXEC_ID and TASK_ORDER identify a task run; the id joins them. */
const taskRunId = (task: { teamExecId: string; taskOrder: number }) =>
  `${task.teamExecId}:${task.taskOrder}`;

export const TaskRunRef = builder.nodeRef<TaskRun>('TaskRun', {
  id: { resolve: taskRunId, ...needs.task('teamExecId', 'taskOrder') },
  // A task's id holds its run's: the run's tasks are read with the field's plan, then picked.
  loadWithoutCache: async (id, context, info) => {
    const at = id.lastIndexOf(':');
    const order = Number(id.slice(at + 1));
    const tasks = await context.loaders
      .plannedTasksOfRun(planOf(info, 'TaskRun'))
      .load(id.slice(0, Math.max(at, 0)));
    // relay's own type lists no Error; graphql-js raises one in the node's place.
    return (tasks.find((task) => task.taskOrder === order) ??
      notFound(`No task run "${id}"`)) as TaskRun;
  },
});

TaskRunRef.implement({
  description:
    'One task of a team run (a row of USER_/DBA_AI_AGENT_TASK_HISTORY, seed 003): the parameters the task read when it started and the result it wrote when it ended.',
  fields: (t) => ({
    teamExecId: t.exposeID('teamExecId', {
      description: HISTORY.teamExecId,
      ...needs.task('teamExecId'),
    }),
    teamRun: t.field({
      type: TeamRunRef,
      nullable: true,
      description:
        'The team run this task belongs to; null when its team-history row is not visible to the caller.',
      ...needs.relation(RELATIONS.taskTeamRun),
      resolve: plannedOr((task, context) => context.loaders.runById.load(task.teamExecId)),
    }),
    taskOrder: t.exposeInt('taskOrder', {
      description: HISTORY.taskOrder,
      ...needs.task('taskOrder'),
    }),
    taskName: t.exposeString('taskName', {
      nullable: true,
      description: HISTORY.taskName,
      ...needs.task('taskName'),
    }),
    agentName: t.exposeString('agentName', {
      description: HISTORY.agentName,
      ...needs.task('agentName'),
    }),
    agent: t.field({
      ...needs.relation(RELATIONS.taskAgent),
      type: AgentRef,
      nullable: true,
      description:
        'The stored Agent Spec (DBMS_AI_AGENT) of the same name; null when there is none (Select AI agents are usually not Agent Specs). Unless its DESCRIBE_AGENT fields are selected (description, inputs, outputs, callContract), shared across requests: an agent created or dropped shows within TEAM_TOOLS_CACHE_TTL_MS (60 s by default).',
      resolve: plannedOr((task, context, info) =>
        (selectsAny(info, unplannedFields(info.schema, 'Agent'))
          ? context.loaders.agentByName
          : context.loaders.agentByNameWithoutDetails
        ).load(task.agentName),
      ),
    }),
    state: t.expose('state', {
      type: TeamRunStateRef,
      description: `${HISTORY.state} The state of this task, not of the whole run.`,
      ...needs.task('state'),
    }),
    input: t.exposeString('input', {
      nullable: true,
      description: 'INPUT (CLOB): the input data of the task, as text; null when not recorded.',
      ...needs.task('input'),
    }),
    result: t.exposeString('result', {
      nullable: true,
      description:
        'RESULT (CLOB): the output of the task (text, JSON, rows or a status message), as text; null while the task runs or when it produced none.',
      ...needs.task('result'),
    }),
    conversationParams: t.expose('conversationParams', {
      type: 'JSON',
      nullable: true,
      description:
        'The JSON parameters for the conversation API (COVERSATION_PARAM as documented, CONVERSATION_PARAMS in other releases; e.g. conversation_id, title); null when absent or when the view has neither column.',
      ...needs.task('conversationParams'),
    }),
    conversationId: t.exposeString('conversationId', {
      nullable: true,
      description:
        'The conversation_id member of conversationParams ($.conversation_id); null when absent.',
      ...needs.task('conversationId'),
    }),
    startDate: t.expose('startDate', {
      type: 'DateTime',
      nullable: true,
      description: HISTORY.startDate,
      ...needs.task('startDate'),
    }),
    endDate: t.expose('endDate', {
      type: 'DateTime',
      nullable: true,
      description: HISTORY.endDate,
      ...needs.task('endDate'),
    }),
    durationMs: t.float({
      nullable: true,
      description: HISTORY.durationMs,
      resolve: (task) => durationMs(task.startDate, task.endDate),
      ...needs.task('startDate', 'endDate'),
    }),
  }),
});

builder.objectFields(TeamRunRef, (t) => ({
  tasks: t.field({
    type: [TaskRunRef],
    description: 'The run’s tasks in TASK_ORDER.',
    ...needs.relation(RELATIONS.runTasks),
    resolve: plannedOr((run, context) => context.loaders.tasksOfRun.load(run.execId)),
  }),
}));

const TaskFailureRef = builder.objectRef<TaskFailure>('TaskFailure').implement({
  description:
    'Why a task failed, as the scheduler recorded it (a row of USER_/DBA_SCHEDULER_JOB_RUN_DETAILS for the job that ran the task); the history views keep only the state.',
  fields: (t) => ({
    message: t.exposeString('additionalInfo', {
      nullable: true,
      description:
        'ADDITIONAL_INFO: the error text the job run reported (ORA- codes and messages of the failed call); null when the scheduler recorded none.',
    }),
    jobName: t.exposeString('jobName', {
      description:
        'JOB_NAME of the job run (matched to the task by its name and start; see docs/oracle.md).',
    }),
    status: t.exposeString('status', {
      nullable: true,
      description: 'STATUS of the job run (FAILED).',
    }),
    startDate: t.expose('startDate', {
      type: 'DateTime',
      nullable: true,
      description: 'ACTUAL_START_DATE of the job run.',
    }),
    logDate: t.expose('logDate', {
      type: 'DateTime',
      nullable: true,
      description: 'LOG_DATE: when the scheduler logged the run’s end.',
    }),
  }),
});

const LlmPromptRef = builder.objectRef<LlmPrompt>('LlmPrompt').implement({
  description:
    'One prompt sent to the LLM in a Select AI conversation and its response (a row of USER_/DBA_CLOUD_AI_CONVERSATION_PROMPTS).',
  fields: (t) => ({
    conversationId: t.exposeString('conversationId', {
      description: 'CONVERSATION_ID: the conversation (the task’s conversationId).',
    }),
    prompt: t.exposeString('prompt', {
      nullable: true,
      description: 'PROMPT (CLOB): what the model was asked.',
    }),
    response: t.exposeString('response', {
      nullable: true,
      description: 'PROMPT_RESPONSE (CLOB): what it answered; null when it gave no answer.',
    }),
    created: t.expose('created', {
      type: 'DateTime',
      nullable: true,
      description: 'CREATED: when the prompt was recorded.',
    }),
  }),
});

const LlmPromptConnectionRef = builder.connectionObject({
  name: 'LlmPromptConnection',
  type: LlmPromptRef,
});

builder.objectFields(TaskRunRef, (t) => ({
  failure: t.field({
    type: TaskFailureRef,
    nullable: true,
    description:
      'For a FAILED task, the error the history views drop: the latest failed run of the scheduler job that ran it. Null for other states, when no job run matches, or when USER_/DBA_SCHEDULER_JOB_RUN_DETAILS is not readable (logged once at start-up). Batched: one statement for every task of the query level.',
    ...needs.task('state', 'teamExecId', 'taskOrder'),
    resolve: async (task, _args, context) => {
      if (task.state !== 'FAILED' || !context.repositories.history.failuresReadable) return null;
      const failures = await context.loaders.failuresOfRun.load(task.teamExecId);
      return failures.find((f) => f.taskOrder === task.taskOrder) ?? null;
    },
  }),
  prompts: t.field({
    type: LlmPromptConnectionRef,
    nullable: true,
    complexity: connectionComplexity,
    description:
      'The LLM prompt/response pairs of the task’s conversation (its conversationId), oldest first. Empty without a conversation id; null when USER_/DBA_CLOUD_AI_CONVERSATION_PROMPTS is not readable. Batched: one statement for every task of the query level.',
    args: { ...t.arg.connectionArgs() },
    ...needs.task('conversationId'),
    resolve: (task, args, context) => {
      if (!context.repositories.history.promptsReadable) return null;
      const conversationId = task.conversationId;
      return offsetConnection(args, async (offset, limit) =>
        conversationId
          ? context.loaders.promptsOfConversation(offset, limit).load(conversationId)
          : { items: [], totalCount: 0 },
      );
    },
  }),
}));
