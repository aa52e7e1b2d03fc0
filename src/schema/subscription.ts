import { builder } from '../builder.js';
import type { Context } from '../context.js';
import type { TeamRunChange, WaitingRun } from '../live/hub.js';
import { PLANNED, type Planned } from '../model/plan.js';
import { TEAM_RUN_STATES } from '../model/team.js';
import { visibleOwner } from '../model/viewer.js';
import { bounded, ORACLE_NAME } from './bounds.js';
import { HISTORY } from './descriptions.js';
import { HumanWaitRef, humanWaitOf, waitingForNeeds } from './human-wait.js';
import { needs } from './needs.js';
import { MAX_PAGE_SIZE } from './pagination.js';
import { plannedOr, planOf } from './plan.js';
import { TeamRunStateRef, teamNamed } from './team.js';
import { TeamRunRef } from './team-run.js';

builder.subscriptionType({
  description:
    'Live changes of team runs, polled from the team-history view once per POLL_INTERVAL_MS for all subscribers together. Over WebSocket (graphql-transport-ws) or SSE at /graphql.',
});

const TEAM_NAME_FILTER =
  'Only runs of this team (TEAM_NAME, exact and case-sensitive); every team when absent. NOT_FOUND, naming the near miss, when no visible team has that name.';

/** A filter naming a team nobody can see would match nothing forever: say so at once. */
async function requireTeam(context: Context, teamName: string | null | undefined): Promise<void> {
  if (teamName) await teamNamed(teamName, context);
}

const TeamRunChangeFilterRef = builder.inputType('TeamRunChangeFilter', {
  description:
    'Which run changes to receive; all given conditions apply. Non-admin subscribers only ever receive runs of their own owner.',
  fields: (t) => ({
    teamName: t.string(bounded(ORACLE_NAME, TEAM_NAME_FILTER)),
    states: t.field({
      type: [TeamRunStateRef],
      ...bounded(null, 'Only changes into one of these states; all states when absent or empty.', {
        maxItems: TEAM_RUN_STATES.length,
      }),
    }),
  }),
});

/**
 * A copy of an event's object carrying what the plan read below its run: the event's objects
 * are shared by every group that receives them (src/live/hub.ts), so they are never changed.
 */
function withPlanOf<T extends object>(object: T, source: object): Planned<T> {
  const planned = (source as Planned<object>)[PLANNED];
  return planned ? { ...object, [PLANNED]: planned } : object;
}

const TeamRunChangeRef = builder.objectRef<TeamRunChange>('TeamRunChange').implement({
  description: 'A run observed in a new state, or a run seen for the first time.',
  fields: (t) => ({
    run: t.field({
      type: TeamRunRef,
      description:
        'The run as the poll read it. Its nested fields (tasks, toolCalls, team) are loaded for this event, so they show the database as of this event.',
      ...needs.self(),
      resolve: plannedOr((change) => change.run),
    }),
    previousState: t.field({
      type: TeamRunStateRef,
      nullable: true,
      description:
        'The state at the previous observation; null for a new run. States that came and went between two polls are not seen.',
      ...needs.nothing(),
      resolve: (change) => change.previousState,
    }),
    state: t.field({
      type: TeamRunStateRef,
      description: 'The state the poll observed (STATE of the team-history row).',
      ...needs.nothing(),
      resolve: (change) => change.state,
    }),
    observedAt: t.expose('observedAt', {
      type: 'DateTime',
      description:
        'When the poll cycle that observed the change started (the change happened between the previous cycle and this instant).',
      ...needs.nothing(),
    }),
  }),
});

const WaitingRunRef = builder.objectRef<WaitingRun>('WaitingRun').implement({
  description:
    'A run paused in WAITING_FOR_HUMAN: it resumes when the person’s answer is given to RUN_TEAM again.',
  fields: (t) => ({
    execId: t.exposeID('execId', { description: HISTORY.teamExecId, ...needs.nothing() }),
    teamName: t.exposeString('teamName', { description: HISTORY.teamName, ...needs.nothing() }),
    startDate: t.expose('startDate', {
      type: 'DateTime',
      nullable: true,
      description: `${HISTORY.startDate} The start of the run, not of the wait.`,
      ...needs.nothing(),
    }),
    waitingSince: t.expose('waitingSince', {
      type: 'DateTime',
      nullable: true,
      description:
        'When the run began waiting: the start of its open tool call (the human tool call it is blocked on), else the start of its task in WAITING_FOR_HUMAN, else the poll that first saw it waiting; null when none of these is known (a run already waiting when polling began, without those rows).',
      ...needs.nothing(),
    }),
    run: t.field({
      type: TeamRunRef,
      description: 'The whole run, with its tasks and tool calls as of this event.',
      ...needs.self(),
      resolve: plannedOr((waiting) => waiting.run),
    }),
    waitingFor: t.field({
      type: HumanWaitRef,
      nullable: true,
      description:
        'What the run waits for (run.waitingFor): the question, the HUMAN tool call, its task and agent, the conversation id, as of this event.',
      ...waitingForNeeds,
      resolve: (waiting, _args, context, info) =>
        humanWaitOf(withPlanOf(waiting.run, waiting), context, info),
    }),
  }),
});

builder.subscriptionFields((t) => ({
  teamRunChanged: t.field({
    type: TeamRunChangeRef,
    description:
      'One event per observed state change of a run and per new run, from the moment of subscribing, filtered by team and new state.',
    args: {
      filter: t.arg({
        type: TeamRunChangeFilterRef,
        description: 'Which changes to receive; every visible run’s changes when not given.',
      }),
    },
    subscribe: async (_root, args, context) => {
      context.repositories.history.requireRuns();
      await requireTeam(context, args.filter?.teamName);
      return context.live.teamRunChanges({ ...args.filter, owner: visibleOwner(context.viewer) });
    },
    resolve: async (change, _args, context, info) => {
      const run = await context.loaders.plannedOfRuns(planOf(info)).load(change.run);
      return withPlanOf(change, run);
    },
  }),
  teamsWaitingForHuman: t.field({
    type: [WaitingRunRef],
    description:
      'The runs waiting for a human (of one team, or of all teams), longest-waiting first: the current set at once, then the whole set again each time it changes.',
    args: { teamName: t.arg.string(bounded(ORACLE_NAME, TEAM_NAME_FILTER)) },
    // Every event re-runs the selection for each waiting run, and the set has no page size:
    // it is priced as the largest page, so that the cost limit bounds one event's work.
    complexity: { field: 1, multiplier: MAX_PAGE_SIZE },
    subscribe: async (_root, args, context) => {
      context.repositories.history.requireRuns();
      await requireTeam(context, args.teamName);
      return context.live.waitingForHuman(args.teamName ?? null, visibleOwner(context.viewer));
    },
    resolve: async (runs, _args, context, info) => {
      const planned = await context.loaders
        .plannedOfRuns(planOf(info))
        .loadMany(runs.map((waiting) => waiting.run));
      return runs.map((waiting, i) => {
        const run = planned[i];
        if (run instanceof Error) throw run;
        return withPlanOf(waiting, run ?? waiting.run);
      });
    },
  }),
}));
