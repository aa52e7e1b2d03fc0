import { builder } from '../builder.js';
import { TEAM_RUN_STATES, type Team, type TeamStats, type TeamTool } from '../model/team.js';
import { lookup } from './lookup.js';
import { connectionComplexity, offsetConnection, rootList } from './pagination.js';

const teams = lookup(
  (context) => context.loaders.teamByName,
  (name) => `No agent team named "${name}"`,
);

export const TeamRef = builder.nodeRef<Team>('Team', {
  id: { resolve: (team) => team.name },
  loadManyWithoutCache: teams.many,
});

export const TeamToolRef = builder.objectRef<TeamTool>('TeamTool').implement({
  description:
    'A Select AI tool used by one of the team’s tasks (DBMS_CLOUD_AI_AGENT.CREATE_TOOL).',
  fields: (t) => ({
    toolId: t.exposeID('toolId', {
      nullable: true,
      description: 'The generated tool id (A2A skills[].id).',
    }),
    name: t.exposeString('name'),
    owner: t.exposeString('owner'),
    instruction: t.exposeString('instruction', { nullable: true }),
    toolType: t.exposeString('toolType', {
      nullable: true,
      description: 'HUMAN, HTTP, RAG, SQL, WEBSEARCH or NOTIFICATION.',
    }),
    agentName: t.exposeString('agentName', {
      nullable: true,
      description: 'The team member that uses it.',
    }),
    taskName: t.exposeString('taskName', {
      nullable: true,
      description: 'The task that lists it.',
    }),
  }),
});

export const TeamRunStateRef = builder.enumType('TeamRunState', {
  description: 'The state of a team run (seed 003).',
  values: {
    RUNNING: { description: 'The team is processing the request.' },
    WAITING_FOR_HUMAN: { description: 'The team paused for a person’s input or approval.' },
    RESUMING: { description: 'The team is continuing after the human input.' },
    SUCCEEDED: { description: 'The team finished with a final answer.' },
    FAILED: { description: 'The team stopped on an error or an unmet condition.' },
  } as const,
});

const StateCountRef = builder
  .objectRef<{ state: (typeof TEAM_RUN_STATES)[number]; count: number }>('TeamRunStateCount')
  .implement({
    fields: (t) => ({
      state: t.field({ type: TeamRunStateRef, resolve: (c) => c.state }),
      count: t.exposeInt('count'),
    }),
  });

const TeamStatsRef = builder.objectRef<TeamStats>('TeamStats').implement({
  description: 'Run statistics of one team, computed by the database over its whole history.',
  fields: (t) => ({
    runCount: t.exposeInt('runCount'),
    runsByState: t.field({
      type: [StateCountRef],
      description: 'One entry per state, in the order of TeamRunState.',
      resolve: (s) => TEAM_RUN_STATES.map((state) => ({ state, count: s.runsByState[state] })),
    }),
    successRate: t.exposeFloat('successRate', {
      nullable: true,
      description:
        'Succeeded runs over finished (succeeded or failed) runs, 0–1; null before any finished.',
    }),
    durationP50Ms: t.exposeFloat('durationP50Ms', {
      nullable: true,
      description: 'Median duration of ended runs.',
    }),
    durationP95Ms: t.exposeFloat('durationP95Ms', { nullable: true }),
    humanWaitCount: t.exposeInt('humanWaitCount', {
      description: 'Answered calls of HUMAN tools: each is a time a run waited for a person.',
    }),
    humanWaitTotalMs: t.exposeFloat('humanWaitTotalMs', { nullable: true }),
    humanWaitAvgMs: t.exposeFloat('humanWaitAvgMs', { nullable: true }),
  }),
});

TeamRef.implement({
  description: 'A Select AI agent team (DBMS_CLOUD_AI_AGENT.CREATE_TEAM).',
  fields: (t) => ({
    name: t.exposeString('name'),
    owner: t.exposeString('owner'),
    description: t.exposeString('description', { nullable: true }),
    status: t.exposeString('status', { nullable: true }),
    tools: t.field({
      type: [TeamToolRef],
      resolve: (team, _args, context) => context.loaders.toolsOfTeam.load(team.name),
    }),
    stats: t.field({
      type: TeamStatsRef,
      resolve: (team, _args, context) => context.loaders.statsOfTeam.load(team.name),
    }),
  }),
});

const TeamFilterRef = builder.inputType('TeamFilter', {
  fields: (t) => ({
    nameContains: t.string({ description: 'Case-insensitive part of the team name.' }),
    owner: t.string({ description: 'Only teams of this owner (schema).' }),
  }),
});

const TeamConnectionRef = builder.connectionObject({ name: 'TeamConnection', type: TeamRef });

builder.queryFields((t) => ({
  teams: t.field({
    ...rootList,
    authScopes: (_root, args) => (args.filter?.owner ? { admin: true } : true),
    type: TeamConnectionRef,
    description: 'Select AI agent teams, by name.',
    complexity: connectionComplexity,
    args: { ...t.arg.connectionArgs(), filter: t.arg({ type: TeamFilterRef }) },
    resolve: (_root, args, context) =>
      offsetConnection(args, async (offset, limit) => {
        const page = await context.repositories.teams.page(args.filter ?? {}, offset, limit);
        for (const team of page.items) context.loaders.teamByName.prime(team.name, team);
        return page;
      }),
  }),
  team: t.field({
    type: TeamRef,
    nullable: true,
    description: 'One team by name; NOT_FOUND when no visible team has that name.',
    args: { name: t.arg.string({ required: true }) },
    resolve: (_root, { name }, context) => teams.one(name, context),
  }),
}));
