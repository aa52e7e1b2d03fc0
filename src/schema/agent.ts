import { builder } from '../builder.js';
import type { Agent, AgentParameter, CallContract } from '../model/agent.js';
import { lookup } from './lookup.js';
import { connectionComplexity, offsetConnection, rootList } from './pagination.js';

const AgentParameterRef = builder.objectRef<AgentParameter>('AgentParameter').implement({
  description: 'One input or output declaration of a stored agent.',
  fields: (t) => ({
    title: t.exposeString('title'),
    type: t.exposeString('type', { nullable: true }),
  }),
});

const CallContractRef = builder.objectRef<CallContract>('CallContract').implement({
  description:
    'The JSON input structure that EXECUTE_AGENT expects (DESCRIBE_AGENT call_contract).',
  fields: (t) => ({
    inputFormat: t.exposeString('inputFormat', { nullable: true }),
    requiredKeys: t.exposeStringList('requiredKeys'),
    nameMatches: t.exposeString('nameMatches', { nullable: true }),
  }),
});

const agents = lookup(
  (context) => context.loaders.agentByName,
  (name) => `No stored agent named "${name}"`,
);

export const AgentRef = builder.nodeRef<Agent>('Agent', {
  id: { resolve: (agent) => agent.name },
  loadManyWithoutCache: agents.many,
});

AgentRef.implement({
  description:
    'A stored Agent Spec (DBMS_AI_AGENT): its catalog row in USER_/DBA_AI_AGENTS and its description from DESCRIBE_AGENT.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'AGENT_NAME.' }),
    agentId: t.id({ description: 'AGENT_ID.', resolve: (agent) => String(agent.agentId) }),
    owner: t.exposeString('owner', { description: 'OWNER (the session user for USER_ views).' }),
    createTime: t.expose('createTime', { type: 'DateTime', nullable: true }),
    description: t.exposeString('description', {
      nullable: true,
      description: 'The top-level component description; null when the spec has none.',
    }),
    inputs: t.field({ type: [AgentParameterRef], resolve: (agent) => agent.inputs }),
    outputs: t.field({ type: [AgentParameterRef], resolve: (agent) => agent.outputs }),
    callContract: t.field({
      type: CallContractRef,
      nullable: true,
      resolve: (agent) => agent.callContract,
    }),
  }),
});

const AgentConnectionRef = builder.connectionObject({ name: 'AgentConnection', type: AgentRef });

builder.queryFields((t) => ({
  agents: t.field({
    ...rootList,
    type: AgentConnectionRef,
    description: 'Stored agents, by owner and name.',
    complexity: connectionComplexity,
    args: t.arg.connectionArgs(),
    resolve: (_root, args, context) =>
      offsetConnection(args, (offset, limit) => context.repositories.agents.page(offset, limit)),
  }),
  agent: t.field({
    type: AgentRef,
    nullable: true,
    description: 'One stored agent by name; NOT_FOUND when no visible agent has that name.',
    args: { name: t.arg.string({ required: true }) },
    resolve: (_root, { name }, context) => agents.one(name, context),
  }),
}));
