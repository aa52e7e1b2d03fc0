import { builder } from '../builder.js';
import { badUserInput } from '../errors.js';
import { RELATIONS } from '../model/plan.js';
import {
  durationMs,
  TEAM_RUN_STATES,
  type TeamRun,
  type TeamRunFilter,
  teamKey,
} from '../model/team.js';
import { runOrderKeys } from '../repositories/team-history.js';
import { bounded, KEY, ORACLE_NAME } from './bounds.js';
import {
  HISTORY,
  NULL_WHEN_VIEW_NOT_GRANTED,
  ORDER_DIRECTION,
  OWNER_FILTER,
  VISIBILITY,
} from './descriptions.js';
import { OrderDirectionRef } from './exec-stat.js';
import { nodeByKey, notFoundAs } from './lookup.js';
import { needs } from './needs.js';
import {
  connectionComplexity,
  keysetConnection,
  offsetConnection,
  ownerFilterScope,
  rootList,
  type SchemaTypesOf,
} from './pagination.js';
import { plannedOr, planOf } from './plan.js';
import { TeamRef, TeamRunStateRef } from './team.js';

const runs = nodeByKey<TeamRun>('TeamRun', {
  id: (run) => run.execId,
  idNeeds: needs.run('execId'),
  loader: (context, info) =>
    info ? context.loaders.plannedRunById(planOf(info, 'TeamRun')) : context.loaders.runById,
  missing: notFoundAs((execId) => `No team run with execId "${execId}"`),
});

export const TeamRunRef = runs.ref;

TeamRunRef.implement({
  description:
    'One execution of an agent team (a row of USER_/DBA_AI_AGENT_TEAM_HISTORY, seed 003), started by DBMS_CLOUD_AI_AGENT.RUN_TEAM. It links to its task runs and tool calls.',
  fields: (t) => ({
    execId: t.exposeID('execId', { description: HISTORY.teamExecId, ...needs.run('execId') }),
    teamName: t.exposeString('teamName', {
      description: HISTORY.teamName,
      ...needs.run('teamName'),
    }),
    team: t.field({
      ...needs.relation(RELATIONS.runTeam),
      type: TeamRef,
      nullable: true,
      description:
        'The team of that name in the catalog; null once the team is dropped or when the caller may not see it. Shared across requests: a team created or dropped shows within TEAM_TOOLS_CACHE_TTL_MS (60 s by default).',
      resolve: plannedOr((run, context) =>
        context.loaders.teamByKey.load(teamKey(run.owner, run.teamName)),
      ),
    }),
    owner: t.exposeString('owner', {
      ...needs.run('owner'),
      description:
        'TEAM_OWNER: the schema that owns the team (the session user when reading the USER_ view, which has no such column).',
    }),
    state: t.expose('state', {
      type: TeamRunStateRef,
      description: HISTORY.state,
      ...needs.run('state'),
    }),
    startDate: t.expose('startDate', {
      type: 'DateTime',
      nullable: true,
      description: HISTORY.startDate,
      ...needs.run('startDate'),
    }),
    endDate: t.expose('endDate', {
      type: 'DateTime',
      nullable: true,
      description: HISTORY.endDate,
      ...needs.run('endDate'),
    }),
    durationMs: t.float({
      nullable: true,
      description: HISTORY.durationMs,
      resolve: (run) => durationMs(run.startDate, run.endDate),
      ...needs.run('startDate', 'endDate'),
    }),
    instanceId: t.exposeInt('instanceId', {
      nullable: true,
      ...needs.run('instanceId'),
      description:
        'TEAM_INSTANCE_ID: the instance id of the session that ran the team; null when not recorded.',
    }),
  }),
});

export const TeamRunConnectionRef = builder.connectionObject({
  name: 'TeamRunConnection',
  type: TeamRunRef,
});

/** The filters a team's own runs take; the cross-team filter adds team and owner. */
const stateAndStartFields = (
  t: PothosSchemaTypes.InputFieldBuilder<SchemaTypesOf, 'InputObject'>,
) => ({
  states: t.field({
    type: [TeamRunStateRef],
    ...bounded(null, 'Only runs in one of these states; every state when absent or empty.', {
      maxItems: TEAM_RUN_STATES.length,
    }),
  }),
  startedAfter: t.field({
    type: 'DateTime',
    description: 'Runs that started at or after this instant.',
  }),
  startedBefore: t.field({
    type: 'DateTime',
    description: 'Runs that started before this instant.',
  }),
});

const TeamRunsOfTeamFilterRef = builder.inputType('TeamRunsOfTeamFilter', {
  description: 'Which runs of one team to list; all given conditions apply.',
  fields: stateAndStartFields,
});

const TeamRunFilterRef = builder.inputType('TeamRunFilter', {
  description: 'Which team runs to list; all given conditions apply.',
  fields: (t) => ({
    teamName: t.string(bounded(ORACLE_NAME, 'Only runs of this team (TEAM_NAME, exact).')),
    ...stateAndStartFields(t),
    owner: t.string(bounded(ORACLE_NAME, `TEAM_OWNER. ${OWNER_FILTER}`)),
    conversationId: t.string(
      bounded(
        KEY,
        'Runs whose task history records this conversation_id (what runTeam and respondToHuman return).',
      ),
    ),
  }),
});

const TeamRunOrderFieldRef = builder.enumType('TeamRunOrderField', {
  description: 'The team-history column that orders teamRuns.',
  values: {
    START_DATE: { description: 'Order by START_DATE; runs without one come last.' },
    END_DATE: {
      description:
        'Order by END_DATE; runs still going (no end date yet) come last, in either direction.',
    },
    TEAM_NAME: { description: 'Order by TEAM_NAME.' },
    STATE: { description: 'Order by STATE, alphabetically.' },
  } as const,
});

const TeamRunOrderRef = builder.inputType('TeamRunOrder', {
  description: 'How to order teamRuns.',
  fields: (t) => ({
    field: t.field({
      type: TeamRunOrderFieldRef,
      required: true,
      description: 'The column to order by.',
    }),
    direction: t.field({
      type: OrderDirectionRef,
      required: true,
      defaultValue: 'DESC',
      description: ORDER_DIRECTION,
    }),
  }),
});

const RUN_FILTER_ARG = 'Conditions on the runs; every run when not given.';

function checkDates(filter: TeamRunFilter | null | undefined): TeamRunFilter {
  if (filter?.startedAfter && filter.startedBefore && filter.startedAfter > filter.startedBefore) {
    throw badUserInput('Argument "filter.startedAfter" is later than "filter.startedBefore"');
  }
  return filter ?? {};
}

builder.objectFields(TeamRef, (t) => ({
  runs: t.field({
    type: TeamRunConnectionRef,
    // A history root of its own (planned at this field), not a column of the team row.
    ...needs.nothing(),
    description: 'The team’s runs (its rows of the team-history view), newest first.',
    complexity: connectionComplexity,
    args: {
      ...t.arg.connectionArgs(),
      filter: t.arg({ type: TeamRunsOfTeamFilterRef, description: RUN_FILTER_ARG }),
    },
    // Offsets here, not keysets: one windowed statement serves every team of the batch with
    // the same arguments, and a cursor names a row of one team only; it reads each team's
    // whole history either way, so a keyset would not make it cheaper.
    resolve: (team, args, context, info) =>
      offsetConnection(args, (offset, limit) =>
        context.loaders
          .runsOfTeam(checkDates(args.filter), offset, limit, planOf(info, 'TeamRun'))
          .load(teamKey(team.owner, team.name)),
      ),
  }),
  waitingForHuman: t.field({
    type: [TeamRunRef],
    ...needs.nothing(),
    description: 'Runs of this team paused in WAITING_FOR_HUMAN, oldest first.',
    resolve: (team, _args, context, info) =>
      context.loaders
        .plannedWaitingOfTeam(planOf(info, 'TeamRun'))
        .load(teamKey(team.owner, team.name)),
  }),
}));

builder.queryFields((t) => ({
  teamRuns: t.field({
    ...rootList,
    authScopes: ownerFilterScope,
    type: TeamRunConnectionRef,
    description: `Team runs across teams (USER_/DBA_AI_AGENT_TEAM_HISTORY), newest first unless ordered otherwise, ties by execId. A cursor holds its run's place in the order, so runs that start while pages are read shift no page; it serves only the order it came from. ${VISIBILITY} ${NULL_WHEN_VIEW_NOT_GRANTED}`,
    complexity: connectionComplexity,
    args: {
      ...t.arg.connectionArgs(),
      filter: t.arg({ type: TeamRunFilterRef, description: RUN_FILTER_ARG }),
      orderBy: t.arg({
        type: TeamRunOrderRef,
        description: 'The order of the runs; START_DATE DESC when not given.',
      }),
    },
    resolve: (_root, args, context, info) => {
      const filter = checkDates(args.filter);
      const order = args.orderBy ?? { field: 'START_DATE', direction: 'DESC' };
      return keysetConnection(
        args,
        { name: `teamRuns:${order.field}:${order.direction}`, keys: runOrderKeys(order) },
        info,
        (window) =>
          context.repositories.history.plannedRunsPage(
            filter,
            order,
            window,
            planOf(info, 'TeamRun'),
          ),
      );
    },
  }),
  teamRun: t.field({
    type: TeamRunRef,
    nullable: true,
    description: 'One run by TEAM_EXEC_ID; NOT_FOUND when there is none.',
    args: { execId: t.arg.id({ required: true, ...bounded(KEY, HISTORY.teamExecId) }) },
    resolve: (_root, { execId }, context, info) => runs.one(String(execId), context, info),
  }),
}));
