import { builder } from '../builder.js';
import { AgentRef } from './agent.js';
import { TeamRef } from './team.js';
import { TeamRunRef } from './team-run.js';

/**
 * The entity keys of the federation subgraph (FEDERATION=true): agents and teams by their
 * natural key, owner and name; team runs by exec id. A reference is resolved through the
 * request's batched loaders, so `_entities` costs one statement per entity type however many
 * representations it carries, and sees only what the viewer may see: another owner's object
 * (or a name that no owner of that name has) resolves to null.
 */
builder.asEntity(AgentRef, {
  key: builder.selection<{ owner: string; name: string }>('owner name'),
  resolveReference: async ({ owner, name }, context) => {
    const agent = await context.loaders.agentByName.load(name);
    return agent?.owner === owner ? agent : null;
  },
});

builder.asEntity(TeamRef, {
  key: builder.selection<{ owner: string; name: string }>('owner name'),
  resolveReference: async ({ owner, name }, context) => {
    const team = await context.loaders.teamByName.load(name);
    return team?.owner === owner ? team : null;
  },
});

builder.asEntity(TeamRunRef, {
  key: builder.selection<{ execId: string }>('execId'),
  resolveReference: ({ execId }, context) => context.loaders.runById.load(execId),
});
