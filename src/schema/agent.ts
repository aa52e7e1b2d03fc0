import { builder } from '../builder.js';
import type { Agent, AgentParameter, CallContract } from '../model/agent.js';
import { bounded, ORACLE_NAME } from './bounds.js';
import { NULL_WHEN_VIEW_NOT_GRANTED, VISIBILITY } from './descriptions.js';
import { nodeByKey, notFoundAs } from './lookup.js';
import { needs } from './needs.js';
import { connectionComplexity, offsetConnection, rootList } from './pagination.js';

const AgentParameterRef = builder.objectRef<AgentParameter>('AgentParameter').implement({
  description: 'One input or output declaration of a stored agent.',
  fields: (t) => ({
    title: t.exposeString('title', {
      description:
        'The parameter name (inputs[].title or outputs[].title); EXECUTE_AGENT input names must match it exactly.',
    }),
    type: t.exposeString('type', {
      nullable: true,
      description: 'The declared JSON type (e.g. "string"); null when the declaration has none.',
    }),
    required: t.exposeBoolean('required', {
      description:
        'Whether executeAgent needs this input: false when the declaration carries a default.',
    }),
  }),
});

const CallContractRef = builder.objectRef<CallContract>('CallContract').implement({
  description:
    'The JSON input structure that EXECUTE_AGENT expects (DESCRIBE_AGENT call_contract).',
  fields: (t) => ({
    inputFormat: t.exposeString('inputFormat', {
      nullable: true,
      description:
        'The input format (call_contract.input_format), e.g. "json_array_name_value_pairs"; null when absent.',
    }),
    requiredKeys: t.exposeStringList('requiredKeys', {
      description:
        'The keys every input element must have (call_contract.required_keys), e.g. name and value.',
    }),
    nameMatches: t.exposeString('nameMatches', {
      nullable: true,
      description:
        'What input names must match (call_contract.name_matches), e.g. "inputs[].title (exact match)"; null when absent.',
    }),
  }),
});

const agents = nodeByKey<Agent>('Agent', {
  id: (agent) => agent.name,
  idNeeds: needs.nothing(),
  loader: (context) => context.loaders.agentByName,
  missing: notFoundAs((name) => `No stored agent named "${name}"`),
});

export const AgentRef = agents.ref;

AgentRef.implement({
  description:
    'A stored Agent Spec (DBMS_AI_AGENT): its catalog row in USER_/DBA_AI_AGENTS and its description from DESCRIBE_AGENT.',
  fields: (t) => ({
    name: t.exposeString('name', {
      ...needs.nothing(),
      description:
        'AGENT_NAME: the name given to CREATE_AGENT and accepted by EXECUTE_AGENT, DESCRIBE_AGENT and DELETE_AGENT.',
    }),
    agentId: t.id({
      ...needs.nothing(),
      description: 'AGENT_ID: the NUMBER that identifies the stored agent in the catalog.',
      resolve: (agent) => String(agent.agentId),
    }),
    owner: t.exposeString('owner', {
      ...needs.nothing(),
      description: 'OWNER of DBA_AI_AGENTS (the session user when reading USER_AI_AGENTS).',
    }),
    createTime: t.expose('createTime', {
      ...needs.nothing(),
      type: 'DateTime',
      nullable: true,
      description:
        'CREATE_TIME (CREATED in the Select AI Agent shape of the view): when the agent was created; null when the catalog has no value.',
    }),
    description: t.exposeString('description', {
      ...needs.unplanned(),
      nullable: true,
      description:
        'DESCRIBE_AGENT description: the top-level Agent Spec component’s description; else the DESCRIPTION column of the Select AI Agent shape of the view; null when neither has one. DESCRIBE_AGENT names an agent without its owner, so only the connected database user’s own agents are described: another owner’s agent has neither this description nor a callContract.',
    }),
    status: t.exposeString('status', {
      ...needs.nothing(),
      nullable: true,
      description:
        'STATUS of the Select AI Agent shape of USER_/DBA_AI_AGENTS (e.g. ENABLED); null where the view has the Agent Spec shape, which has no status.',
    }),
    lastModified: t.expose('lastModified', {
      ...needs.nothing(),
      type: 'DateTime',
      nullable: true,
      description:
        'LAST_MODIFIED of the Select AI Agent shape of USER_/DBA_AI_AGENTS: when the agent was last changed; null where the view has the Agent Spec shape.',
    }),
    inputs: t.field({
      ...needs.unplanned(),
      type: [AgentParameterRef],
      description:
        'The input declarations of the top-level executable component: DESCRIBE_AGENT inputs, else the INPUTS column (CLOB) of the catalog view.',
      resolve: (agent) => agent.inputs,
    }),
    outputs: t.field({
      ...needs.unplanned(),
      type: [AgentParameterRef],
      description:
        'The output declarations of the top-level executable component: DESCRIBE_AGENT outputs, else the OUTPUTS column (CLOB) of the catalog view.',
      resolve: (agent) => agent.outputs,
    }),
    callContract: t.field({
      ...needs.unplanned(),
      type: CallContractRef,
      nullable: true,
      description:
        'DESCRIBE_AGENT call_contract; null when the description has none, and for another owner’s agent (see description).',
      resolve: (agent) => agent.callContract,
    }),
  }),
});

const AgentConnectionRef = builder.connectionObject({ name: 'AgentConnection', type: AgentRef });

builder.queryFields((t) => ({
  agents: t.field({
    ...rootList,
    type: AgentConnectionRef,
    description: `Stored agents (USER_/DBA_AI_AGENTS), by owner and name. ${VISIBILITY} ${NULL_WHEN_VIEW_NOT_GRANTED}`,
    complexity: connectionComplexity,
    args: t.arg.connectionArgs(),
    resolve: (_root, args, context) =>
      offsetConnection(args, (offset, limit) => context.repositories.agents.page(offset, limit)),
  }),
  agent: t.field({
    type: AgentRef,
    nullable: true,
    description: 'One stored agent by name; NOT_FOUND when no visible agent has that name.',
    args: {
      name: t.arg.string({
        required: true,
        ...bounded(
          ORACLE_NAME,
          'AGENT_NAME, exact and case-sensitive (Oracle stores unquoted names in upper case).',
        ),
      }),
    },
    resolve: (_root, { name }, context) => agents.one(name, context),
  }),
}));
