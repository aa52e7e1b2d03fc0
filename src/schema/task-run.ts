import { builder } from '../builder.js';
import { durationMs, type TaskRun } from '../model/team.js';
import { AgentRef } from './agent.js';
import { nodesOrErrors } from './lookup.js';
import { TeamRunStateRef } from './team.js';
import { TeamRunRef } from './team-run.js';

/** TEAM_EXEC_ID and TASK_ORDER identify a task run; the id joins them. */
const taskRunId = (task: { teamExecId: string; taskOrder: number }) =>
  `${task.teamExecId}:${task.taskOrder}`;

export const TaskRunRef = builder.nodeRef<TaskRun>('TaskRun', {
  id: { resolve: taskRunId },
  loadManyWithoutCache: (ids, context) => {
    const keys = ids.map((id) => {
      const at = id.lastIndexOf(':');
      return { execId: id.slice(0, at), order: Number(id.slice(at + 1)) };
    });
    const tasks = context.loaders.tasksOfRun.loadMany(keys.map((k) => k.execId));
    const found = tasks.then((ofRuns) =>
      keys.map((key, i) => {
        const ofRun = ofRuns[i];
        if (ofRun instanceof Error) return ofRun;
        return ofRun?.find((t) => t.taskOrder === key.order) ?? null;
      }),
    );
    return nodesOrErrors(ids, found, (id) => `No task run "${id}"`);
  },
});

TaskRunRef.implement({
  description: 'One task of a team run (a row of USER_/DBA_AI_AGENT_TASK_HISTORY).',
  fields: (t) => ({
    teamExecId: t.exposeID('teamExecId'),
    teamRun: t.field({
      type: TeamRunRef,
      nullable: true,
      resolve: (task, _args, context) => context.loaders.runById.load(task.teamExecId),
    }),
    taskOrder: t.exposeInt('taskOrder', {
      description: 'Position of this occurrence in the team’s sequence.',
    }),
    taskName: t.exposeString('taskName', { nullable: true }),
    agentName: t.exposeString('agentName'),
    agent: t.field({
      type: AgentRef,
      nullable: true,
      description: 'The stored Agent Spec of that name, when there is one.',
      resolve: (task, _args, context) => context.loaders.agentByName.load(task.agentName),
    }),
    state: t.field({ type: TeamRunStateRef, resolve: (task) => task.state }),
    input: t.exposeString('input', { nullable: true }),
    result: t.exposeString('result', { nullable: true }),
    conversationParams: t.expose('conversationParams', {
      type: 'JSON',
      nullable: true,
      description:
        'The conversation parameters (COVERSATION_PARAM or its later spelling), as JSON.',
    }),
    conversationId: t.exposeString('conversationId', {
      nullable: true,
      description: 'conversation_id from the conversation parameters.',
    }),
    startDate: t.expose('startDate', { type: 'DateTime', nullable: true }),
    endDate: t.expose('endDate', { type: 'DateTime', nullable: true }),
    durationMs: t.float({
      nullable: true,
      resolve: (task) => durationMs(task.startDate, task.endDate),
    }),
  }),
});

builder.objectFields(TeamRunRef, (t) => ({
  tasks: t.field({
    type: [TaskRunRef],
    description: 'The run’s tasks in TASK_ORDER.',
    resolve: (run, _args, context) => context.loaders.tasksOfRun.load(run.execId),
  }),
}));
