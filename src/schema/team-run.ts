import { builder } from '../builder.js';
import { badUserInput } from '../errors.js';
import { durationMs, type TeamRun, type TeamRunFilter } from '../model/team.js';
import { OrderDirectionRef } from './exec-stat.js';
import { lookup } from './lookup.js';
import {
  connectionComplexity,
  offsetConnection,
  rootList,
  type SchemaTypesOf,
} from './pagination.js';
import { TeamRef, TeamRunStateRef } from './team.js';

const runs = lookup(
  (context) => context.loaders.runById,
  (execId) => `No team run with execId "${execId}"`,
);

export const TeamRunRef = builder.nodeRef<TeamRun>('TeamRun', {
  id: { resolve: (run) => run.execId },
  loadManyWithoutCache: runs.many,
});

TeamRunRef.implement({
  description: 'One execution of an agent team (a row of USER_/DBA_AI_AGENT_TEAM_HISTORY).',
  fields: (t) => ({
    execId: t.exposeID('execId', { description: 'TEAM_EXEC_ID.' }),
    teamName: t.exposeString('teamName'),
    team: t.field({
      type: TeamRef,
      nullable: true,
      description: 'The team, while it still exists in the catalog.',
      resolve: (run, _args, context) => context.loaders.teamByName.load(run.teamName),
    }),
    owner: t.exposeString('owner', { description: 'TEAM_OWNER.' }),
    state: t.field({ type: TeamRunStateRef, resolve: (run) => run.state }),
    startDate: t.expose('startDate', { type: 'DateTime', nullable: true }),
    endDate: t.expose('endDate', {
      type: 'DateTime',
      nullable: true,
      description: 'Null while the run goes on.',
    }),
    durationMs: t.float({
      nullable: true,
      description: 'From start to end; null while the run goes on.',
      resolve: (run) => durationMs(run.startDate, run.endDate),
    }),
    instanceId: t.exposeInt('instanceId', { nullable: true, description: 'TEAM_INSTANCE_ID.' }),
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
  states: t.field({ type: [TeamRunStateRef] }),
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
  fields: stateAndStartFields,
});

const TeamRunFilterRef = builder.inputType('TeamRunFilter', {
  fields: (t) => ({
    teamName: t.string(),
    ...stateAndStartFields(t),
    owner: t.string({ description: 'TEAM_OWNER.' }),
  }),
});

const TeamRunOrderFieldRef = builder.enumType('TeamRunOrderField', {
  values: ['START_DATE', 'END_DATE', 'TEAM_NAME', 'STATE'] as const,
});

const TeamRunOrderRef = builder.inputType('TeamRunOrder', {
  fields: (t) => ({
    field: t.field({ type: TeamRunOrderFieldRef, required: true }),
    direction: t.field({ type: OrderDirectionRef, required: true, defaultValue: 'DESC' }),
  }),
});

function checkDates(filter: TeamRunFilter | null | undefined): TeamRunFilter {
  if (filter?.startedAfter && filter.startedBefore && filter.startedAfter > filter.startedBefore) {
    throw badUserInput('Argument "filter.startedAfter" is later than "filter.startedBefore"');
  }
  return filter ?? {};
}

builder.objectFields(TeamRef, (t) => ({
  runs: t.field({
    type: TeamRunConnectionRef,
    description: 'The team’s runs, newest first.',
    complexity: connectionComplexity,
    args: { ...t.arg.connectionArgs(), filter: t.arg({ type: TeamRunsOfTeamFilterRef }) },
    resolve: (team, args, context) =>
      offsetConnection(args, (offset, limit) =>
        context.loaders.runsOfTeam(checkDates(args.filter), offset, limit).load(team.name),
      ),
  }),
  waitingForHuman: t.field({
    type: [TeamRunRef],
    description: 'Runs of this team paused in WAITING_FOR_HUMAN, oldest first.',
    resolve: (team, _args, context) => context.loaders.waitingOfTeam.load(team.name),
  }),
}));

builder.queryFields((t) => ({
  teamRuns: t.field({
    ...rootList,
    authScopes: (_root, args) => (args.filter?.owner ? { admin: true } : true),
    type: TeamRunConnectionRef,
    description: 'Team runs across teams, newest first unless ordered otherwise.',
    complexity: connectionComplexity,
    args: {
      ...t.arg.connectionArgs(),
      filter: t.arg({ type: TeamRunFilterRef }),
      orderBy: t.arg({ type: TeamRunOrderRef }),
    },
    resolve: (_root, args, context) =>
      offsetConnection(args, (offset, limit) =>
        context.repositories.history.page(
          checkDates(args.filter),
          args.orderBy ?? { field: 'START_DATE', direction: 'DESC' },
          offset,
          limit,
        ),
      ),
  }),
  teamRun: t.field({
    type: TeamRunRef,
    nullable: true,
    description: 'One run by TEAM_EXEC_ID; NOT_FOUND when there is none.',
    args: { execId: t.arg.id({ required: true }) },
    resolve: (_root, { execId }, context) => runs.one(String(execId), context),
  }),
}));
