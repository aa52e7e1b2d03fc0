import type { A2AAgentListing } from '../a2a/client.js';
import type { CardDrift, CardDriftKind } from '../a2a/drift.js';
import { cardDrift, catalogTool } from '../a2a/drift.js';
import type {
  AgentCard,
  AgentCardCapabilities,
  AgentCardInterface,
  AgentCardSkill,
} from '../a2a/normalize.js';
import { builder } from '../builder.js';
import { teamKey } from '../model/team.js';
import { bounded, ORACLE_NAME } from './bounds.js';
import { TEAM_NAME_ARG } from './descriptions.js';
import { needs } from './needs.js';
import { rootList } from './pagination.js';
import { TeamRef, TeamToolRef } from './team.js';

/** A card with the team it was fetched for, so that fields below it can reach the catalog. */
export interface TeamAgentCard extends AgentCard {
  readonly teamName: string;
  readonly skills: readonly TeamAgentSkill[];
}

export interface TeamAgentSkill extends AgentCardSkill {
  /** The team whose card lists the skill: AgentSkill.tool looks the tool up in its catalog. */
  readonly teamName: string;
}

function forTeam(card: AgentCard, teamName: string): TeamAgentCard {
  return { ...card, teamName, skills: card.skills.map((skill) => ({ ...skill, teamName })) };
}

/**
 * Loaded by team name. Any field of this type may resolve to the team name alone (as
 * `Team.agentCard` does); the per-request loader then fetches each card once per operation,
 * in front of the client's cross-request cache. A card that fails to load fails that field
 * alone, with the client's error code.
 */
export const AgentCardRef = builder.loadableObjectRef('AgentCard', {
  load: async (teamNames: string[], context) => {
    // The A2A server answers with the service's identity. Administrators see whatever it
    // publishes; anyone else only the cards of teams they may see (another owner's team does
    // not exist for them).
    const teams = context.viewer.admin ? [] : await context.loaders.teamByKey.loadMany(teamNames);
    return Promise.all(
      teamNames.map((teamName, i) => {
        const team = teams[i];
        if (team instanceof Error) return team;
        if (!context.viewer.admin && !team) return context.repositories.teams.unknown(teamName);
        return context.a2a.card(teamName).then(
          (card) => forTeam(card, teamName),
          (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
        );
      }),
    );
  },
});

const AgentCardInterfaceRef = builder
  .objectRef<AgentCardInterface>('AgentCardInterface')
  .implement({
    description:
      'One address of the agent: A2A 1.0 supportedInterfaces, or the 0.3 url and additionalInterfaces.',
    fields: (t) => ({
      url: t.exposeString('url', { description: 'The address to send A2A requests to.' }),
      transport: t.exposeString('transport', {
        description: 'Protocol binding: JSONRPC, GRPC or HTTP+JSON.',
      }),
      protocolVersion: t.exposeString('protocolVersion', {
        description:
          'A2A protocol version spoken there ("1.0", "0.3", …); on a 0.3 card, the card’s protocolVersion.',
      }),
    }),
  });

const AgentCardProviderRef = builder
  .objectRef<NonNullable<AgentCard['provider']>>('AgentCardProvider')
  .implement({
    description: 'The organisation that offers the agent (the card’s provider).',
    fields: (t) => ({
      organization: t.exposeString('organization', {
        description: 'The organisation’s name (provider.organization).',
      }),
      url: t.exposeString('url', { description: 'The organisation’s website (provider.url).' }),
    }),
  });

const AgentCardExtensionRef = builder
  .objectRef<AgentCardCapabilities['extensions'][number]>('AgentCardExtension')
  .implement({
    description: 'A protocol extension the agent supports.',
    fields: (t) => ({
      uri: t.exposeString('uri', { description: 'The URI that identifies the extension.' }),
      description: t.exposeString('description', {
        nullable: true,
        description: 'How the agent uses the extension; null when the card does not say.',
      }),
      required: t.exposeBoolean('required', {
        description: 'Clients must understand the extension to talk to the agent.',
      }),
    }),
  });

const AgentCardCapabilitiesRef = builder
  .objectRef<AgentCardCapabilities>('AgentCardCapabilities')
  .implement({
    description: 'Optional A2A features; null where the card does not say.',
    fields: (t) => ({
      streaming: t.exposeBoolean('streaming', {
        nullable: true,
        description: 'The agent streams responses (SSE); null when the card does not say.',
      }),
      pushNotifications: t.exposeBoolean('pushNotifications', {
        nullable: true,
        description:
          'The agent can push task updates to a client webhook; null when the card does not say.',
      }),
      stateTransitionHistory: t.exposeBoolean('stateTransitionHistory', {
        nullable: true,
        description: 'An A2A 0.3 capability; always null on 1.0 cards, which dropped it.',
      }),
      extensions: t.field({
        type: [AgentCardExtensionRef],
        description: 'Protocol extensions the agent supports; empty when none.',
        resolve: (capabilities) => capabilities.extensions,
      }),
    }),
  });

export const AgentSkillRef = builder.objectRef<TeamAgentSkill>('AgentSkill').implement({
  description:
    'A skill the card publishes. For a Select AI team (seed 001): id ← the tool id, name ← the tool name, description ← the tool instruction.',
  fields: (t) => ({
    id: t.exposeString('id', {
      description: 'The skill id (skills[].id): for a Select AI team, the tool id.',
    }),
    name: t.exposeString('name', {
      description: 'The skill name (skills[].name): for a Select AI team, the tool name.',
    }),
    description: t.exposeString('description', {
      description:
        'The skill description (skills[].description): for a Select AI team, the tool’s instruction attribute.',
    }),
    tags: t.exposeStringList('tags', { description: 'Keywords of the skill; may be empty.' }),
    examples: t.exposeStringList('examples', {
      description: 'Example prompts for the skill; empty when the card gives none.',
    }),
    inputModes: t.exposeStringList('inputModes', {
      description: 'Media types; empty when the skill takes the card’s defaultInputModes.',
    }),
    outputModes: t.exposeStringList('outputModes', {
      description: 'Media types; empty when the skill takes the card’s defaultOutputModes.',
    }),
  }),
});

AgentCardRef.implement({
  description:
    'The A2A agent card of a Select AI agent team, as its A2A server publishes it, in one shape whether the server wrote A2A 0.3 or 1.0.',
  fields: (t) => ({
    name: t.exposeString('name', {
      description: 'The card name: for a Select AI team, its team_name (seed 001).',
    }),
    description: t.exposeString('description', {
      description:
        'The card description: for a Select AI team, its CREATE_TEAM description, or the team name when that is not set (seed 001).',
    }),
    version: t.exposeString('version', { description: 'The agent’s version.' }),
    protocolVersion: t.exposeString('protocolVersion', {
      description: 'A2A protocol version of the preferred interface ("1.0", "0.3", …).',
    }),
    url: t.exposeString('url', { description: 'Address of the preferred interface.' }),
    preferredTransport: t.exposeString('preferredTransport', {
      description: 'Protocol binding of the preferred interface.',
    }),
    interfaces: t.field({
      type: [AgentCardInterfaceRef],
      description: 'Every interface, the preferred one first.',
      resolve: (card) => card.interfaces,
    }),
    provider: t.field({
      type: AgentCardProviderRef,
      nullable: true,
      description: 'Who offers the agent; null when the card does not say.',
      resolve: (card) => card.provider,
    }),
    iconUrl: t.exposeString('iconUrl', {
      nullable: true,
      description: 'An icon for the agent; null when the card has none.',
    }),
    documentationUrl: t.exposeString('documentationUrl', {
      nullable: true,
      description: 'The agent’s documentation; null when the card has none.',
    }),
    capabilities: t.field({
      type: AgentCardCapabilitiesRef,
      description: 'Optional A2A features the agent supports.',
      resolve: (card) => card.capabilities,
    }),
    defaultInputModes: t.exposeStringList('defaultInputModes', {
      description:
        'Media types the agent accepts (e.g. text/plain), unless a skill says otherwise.',
    }),
    defaultOutputModes: t.exposeStringList('defaultOutputModes', {
      description: 'Media types the agent produces, unless a skill says otherwise.',
    }),
    securitySchemes: t.field({
      type: 'JSON',
      description:
        'Scheme name → security scheme, in the A2A 1.0 JSON form (0.3 schemes are translated).',
      resolve: (card) => card.securitySchemes,
    }),
    skills: t.field({
      type: [AgentSkillRef],
      description: 'What the agent can do: for a Select AI team, one skill per tool (seed 001).',
      resolve: (card) => card.skills,
    }),
    signed: t.exposeBoolean('signed', {
      description: 'The card carries JWS signatures. They are not verified.',
    }),
  }),
});

export const A2AAgentListingRef = builder.objectRef<A2AAgentListing>('A2AAgentListing').implement({
  description: 'One agent that the A2A server lists for the database user (seed 004).',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'The Select AI agent team name.' }),
    description: t.exposeString('description', {
      nullable: true,
      description: 'The Select AI agent team description; null when the listing has none.',
    }),
    agentCardUrl: t.exposeString('agentCardUrl', {
      description:
        'Where the team’s agent card is published (agent_card_url, ending in .well-known/agent-card.json).',
    }),
  }),
});

const CARD_DRIFT_KINDS: Record<CardDriftKind, string> = {
  TOOL_MISSING_FROM_CARD: 'A tool of the team has no skill of its name on the card.',
  SKILL_WITHOUT_TOOL: 'A skill on the card has no tool of its name in the team.',
  SKILL_DESCRIPTION_DIFFERS: 'The skill description is not the tool’s instruction.',
  SKILL_ID_DIFFERS: 'The skill id is not the tool id.',
  CARD_NAME_DIFFERS: 'The card name is not the team name.',
  CARD_DESCRIPTION_DIFFERS:
    'The card description is not the team description (or the team name when it has none).',
};

export const CardDriftKindRef = builder.enumType('CardDriftKind', {
  description: 'How an A2A card differs from what seed 001’s mapping makes of the catalog.',
  values: Object.fromEntries(
    Object.entries(CARD_DRIFT_KINDS).map(([kind, description]) => [kind, { description }]),
  ) as Record<CardDriftKind, { description: string }>,
});

export const CardDriftRef = builder.objectRef<CardDrift>('CardDrift').implement({
  description: 'One difference between a team in the database and its published A2A card.',
  fields: (t) => ({
    kind: t.field({
      type: CardDriftKindRef,
      description: 'What differs.',
      resolve: (drift) => drift.kind,
    }),
    toolName: t.string({
      nullable: true,
      description: 'The tool or skill concerned; null for card-level differences.',
      resolve: (drift) => drift.toolName ?? null,
    }),
    expected: t.string({
      nullable: true,
      description: 'What the catalog says, by seed 001’s mapping.',
      resolve: (drift) => drift.expected ?? null,
    }),
    actual: t.string({
      nullable: true,
      description: 'What the card says.',
      resolve: (drift) => drift.actual ?? null,
    }),
  }),
});

builder.queryFields((t) => ({
  agentCard: t.field({
    type: AgentCardRef,
    nullable: true,
    description:
      'The A2A agent card of a Select AI agent team. Errors: NOT_FOUND (the A2A server does not publish the team), UNAUTHENTICATED, TIMEOUT, UPSTREAM_UNAVAILABLE (unreachable, or an invalid card).',
    args: {
      teamName: t.arg.string({ required: true, ...bounded(ORACLE_NAME, TEAM_NAME_ARG) }),
    },
    resolve: (_root, { teamName }) => teamName,
  }),
  a2aAgents: t.field({
    ...rootList,
    type: [A2AAgentListingRef],
    description: 'The agents the A2A server lists for its database user (seed 004).',
    resolve: async (_root, _args, context) => {
      const listings = await context.a2a.listAgents();
      if (context.viewer.admin) return listings;
      const teams = await context.loaders.teamByKey.loadMany(listings.map((l) => l.name));
      return listings.filter((_, i) => teams[i] && !(teams[i] instanceof Error));
    },
  }),
}));

builder.objectField(A2AAgentListingRef, 'team', (t) =>
  t.field({
    type: TeamRef,
    nullable: true,
    description: 'The Select AI team of that name, when the caller can see it.',
    resolve: (listing, _args, context) => context.loaders.teamByKey.load(listing.name),
  }),
);

builder.objectField(AgentSkillRef, 'tool', (t) =>
  t.field({
    type: TeamToolRef,
    nullable: true,
    description: 'The team’s catalog tool of the same name (seed 001 maps tools to skills).',
    resolve: async (skill, _args, context) => {
      const tools = await context.loaders.toolsOfTeam.load(skill.teamName);
      return tools.find((tool) => tool.name === skill.name) ?? null;
    },
  }),
);

builder.objectFields(TeamRef, (t) => ({
  agentCard: t.field({
    type: AgentCardRef,
    nullable: true,
    description: 'The team’s A2A agent card; null with an error when the card cannot be loaded.',
    ...needs.nothing(),
    resolve: (team) => team.name,
  }),
  cardDrift: t.field({
    type: [CardDriftRef],
    nullable: true,
    description:
      'How the published A2A card differs from the catalog (seed 001’s mapping): missing tools, extra skills, other descriptions or ids. The catalog side is the team’s `tools`, as fresh as they are.',
    ...needs.nothing(),
    resolve: async (team, _args, context) => {
      const [card, tools] = await Promise.all([
        AgentCardRef.getDataloader(context).load(team.name),
        context.loaders.toolsOfTeam.load(teamKey(team.owner, team.name)),
      ]);
      return cardDrift(card, tools.map(catalogTool), {
        name: team.name,
        description: team.description,
      });
    },
  }),
}));
