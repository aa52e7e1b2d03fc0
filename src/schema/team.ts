import { builder } from '../builder.js';
import {
  TEAM_RUN_STATES,
  type Team,
  type TeamStats,
  type TeamTool,
  teamKey,
} from '../model/team.js';
import { bounded, ORACLE_NAME, ORACLE_NAME_PART } from './bounds.js';
import {
  CATALOG_SHARED,
  NULL_WHEN_VIEW_NOT_GRANTED,
  OWNER_FILTER,
  TEAM_NAME_ARG,
  VISIBILITY,
} from './descriptions.js';
import { nodeByKey } from './lookup.js';
import { needs } from './needs.js';
import {
  connectionComplexity,
  offsetConnection,
  ownerFilterScope,
  rootList,
} from './pagination.js';

const teams = nodeByKey<Team>('Team', {
  id: (team) => team.id,
  loader: (context) => context.loaders.teamByKey,
  // The one answer to an unknown team name, with its near miss (src/repositories/teams.ts).
  missing: (name, context) => context.repositories.teams.unknown(name),
});

export const TeamRef = teams.ref;
/** The visible team of this name, or NOT_FOUND naming the near miss. */
export const teamNamed = teams.one;

export const TeamToolRef = builder.objectRef<TeamTool>('TeamTool').implement({
  description:
    'A Select AI tool used by one of the team’s tasks (DBMS_CLOUD_AI_AGENT.CREATE_TOOL).',
  fields: (t) => ({
    toolId: t.exposeID('toolId', {
      nullable: true,
      description:
        'The tool id that CREATE_TOOL generated (A2A skills[].id); null when the tool catalog view has no id column (its name is unconfirmed).',
    }),
    name: t.exposeString('name', {
      description: 'TOOL_NAME of USER_/DBA_AI_AGENT_TOOLS (A2A skills[].name).',
    }),
    owner: t.exposeString('owner', {
      description: 'OWNER of DBA_AI_AGENT_TOOLS (the session user when reading the USER_ view).',
    }),
    instruction: t.exposeString('instruction', {
      nullable: true,
      description:
        'The tool’s instruction attribute (USER_/DBA_AI_AGENT_TOOL_ATTRIBUTES, A2A skills[].description); null when not set.',
    }),
    toolType: t.exposeString('toolType', {
      nullable: true,
      description:
        'The tool_type attribute: HUMAN, HTTP, RAG, SQL, WEBSEARCH or NOTIFICATION; null when not set.',
    }),
    agentName: t.exposeString('agentName', {
      nullable: true,
      description:
        'The team member (agents[].name of the team’s agents attribute) whose task lists the tool.',
    }),
    taskName: t.exposeString('taskName', {
      nullable: true,
      description: 'The task (agents[].task) whose tools attribute lists the tool.',
    }),
  }),
});

export const TeamRunStateRef = builder.enumType('TeamRunState', {
  description:
    'STATE of a team run or of one of its tasks (USER_/DBA_AI_AGENT_TEAM_HISTORY and _TASK_HISTORY, seed 003).',
  values: {
    RUNNING: { description: 'The team is processing the request.' },
    WAITING_FOR_HUMAN: { description: 'The team paused for a person’s input or approval.' },
    RESUMING: { description: 'The team is continuing after the human input.' },
    SUCCEEDED: { description: 'The team finished with a final answer.' },
    FAILED: { description: 'The team stopped on an error or an unmet condition.' },
  } as const,
});

export const StateCountRef = builder
  .objectRef<{ state: (typeof TEAM_RUN_STATES)[number]; count: number }>('TeamRunStateCount')
  .implement({
    description: 'How many runs of a team are in one state.',
    fields: (t) => ({
      state: t.field({
        type: TeamRunStateRef,
        description: 'The STATE counted.',
        resolve: (c) => c.state,
      }),
      count: t.exposeInt('count', { description: 'Runs in that state; 0 when none.' }),
    }),
  });

const TeamStatsRef = builder.objectRef<TeamStats>('TeamStats').implement({
  description:
    'Run statistics of one team, computed by the database over its whole history (USER_/DBA_AI_AGENT_TEAM_HISTORY, human waits from the tool history). Durations are milliseconds.',
  fields: (t) => ({
    runCount: t.exposeInt('runCount', { description: 'Runs of the team, in any state.' }),
    runsByState: t.field({
      type: [StateCountRef],
      description:
        'One entry per state, every state included, in the order RUNNING, WAITING_FOR_HUMAN, RESUMING, SUCCEEDED, FAILED.',
      resolve: (s) => TEAM_RUN_STATES.map((state) => ({ state, count: s.runsByState[state] })),
    }),
    successRate: t.exposeFloat('successRate', {
      nullable: true,
      description:
        'Succeeded runs over finished (succeeded or failed) runs, 0–1; null before any finished.',
    }),
    durationP50Ms: t.exposeFloat('durationP50Ms', {
      nullable: true,
      description: 'Median END_DATE minus START_DATE of ended runs; null before any run has ended.',
    }),
    durationP95Ms: t.exposeFloat('durationP95Ms', {
      nullable: true,
      description: '95th percentile duration of ended runs; null before any run has ended.',
    }),
    humanWaitCount: t.exposeInt('humanWaitCount', {
      description: 'Answered calls of HUMAN tools: each is a time a run waited for a person.',
    }),
    humanWaitTotalMs: t.exposeFloat('humanWaitTotalMs', {
      nullable: true,
      description: 'Summed duration of those answered HUMAN tool calls; null when there are none.',
    }),
    humanWaitAvgMs: t.exposeFloat('humanWaitAvgMs', {
      nullable: true,
      description: 'Average duration of an answered HUMAN tool call; null when there are none.',
    }),
  }),
});

TeamRef.implement({
  description:
    'A Select AI agent team (DBMS_CLOUD_AI_AGENT.CREATE_TEAM): a row of USER_/DBA_AI_AGENT_TEAMS.',
  fields: (t) => ({
    name: t.exposeString('name', {
      ...needs.nothing(),
      description: 'AGENT_TEAM_NAME: the team_name given to CREATE_TEAM (the A2A card name).',
    }),
    owner: t.exposeString('owner', {
      ...needs.nothing(),
      description: 'OWNER of DBA_AI_AGENT_TEAMS (the session user when reading the USER_ view).',
    }),
    description: t.exposeString('description', {
      ...needs.nothing(),
      nullable: true,
      description: 'DESCRIPTION (CLOB) given to CREATE_TEAM; null when not set.',
    }),
    status: t.exposeString('status', {
      ...needs.nothing(),
      nullable: true,
      description:
        'STATUS of the team catalog view, as Oracle reports it; null when the view has no STATUS column (its presence is unconfirmed).',
    }),
    tools: t.field({
      ...needs.nothing(),
      type: [TeamToolRef],
      description:
        'The tools of the team’s tasks, in the order the team lists its members and each task its tools (team attribute agents, task attribute tools). Shared across requests: a change to the catalog shows within TEAM_TOOLS_CACHE_TTL_MS (60 s by default).',
      resolve: (team, _args, context) =>
        context.loaders.toolsOfTeam.load(teamKey(team.owner, team.name)),
    }),
    stats: t.field({
      ...needs.nothing(),
      type: TeamStatsRef,
      description: 'Run statistics over the team’s whole history.',
      resolve: (team, _args, context) =>
        context.loaders.statsOfTeam.load(teamKey(team.owner, team.name)),
    }),
  }),
});

const TeamFilterRef = builder.inputType('TeamFilter', {
  description: 'Which teams to list; all given conditions apply.',
  fields: (t) => ({
    nameContains: t.string(bounded(ORACLE_NAME_PART, 'Case-insensitive part of the team name.')),
    owner: t.string(bounded(ORACLE_NAME, OWNER_FILTER)),
  }),
});

const TeamConnectionRef = builder.connectionObject({ name: 'TeamConnection', type: TeamRef });

builder.queryFields((t) => ({
  teams: t.field({
    ...rootList,
    authScopes: ownerFilterScope,
    type: TeamConnectionRef,
    description: `Select AI agent teams (USER_/DBA_AI_AGENT_TEAMS), by name. ${VISIBILITY} ${NULL_WHEN_VIEW_NOT_GRANTED} ${CATALOG_SHARED}`,
    complexity: connectionComplexity,
    args: {
      ...t.arg.connectionArgs(),
      filter: t.arg({
        type: TeamFilterRef,
        description: 'Conditions on the teams; all when not given.',
      }),
    },
    resolve: (_root, args, context) =>
      offsetConnection(args, async (offset, limit) => {
        const page = await context.repositories.teams.page(args.filter ?? {}, offset, limit);
        for (const team of page.items) context.loaders.teamByKey.prime(team.id, team);
        return page;
      }),
  }),
  team: t.field({
    type: TeamRef,
    nullable: true,
    description: `One team by name; NOT_FOUND when no visible team has that name. ${CATALOG_SHARED}`,
    args: { name: t.arg.string({ required: true, ...bounded(ORACLE_NAME, TEAM_NAME_ARG) }) },
    resolve: (_root, { name }, context) => teamNamed(name, context),
  }),
}));
