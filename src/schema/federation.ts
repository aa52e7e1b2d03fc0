import { builder } from '../builder.js';
import { teamKey } from '../model/team.js';
import { AgentRef } from './agent.js';
import { type ArgumentBound, type EntityKeys, KEY, ORACLE_NAME } from './bounds.js';
import { planOf } from './plan.js';
import { TeamRef } from './team.js';
import { TeamRunRef } from './team-run.js';

/**
 * The entity keys of the federation subgraph (FEDERATION=true): agents and teams by their
 * natural key, owner and name; team runs by exec id. A reference is resolved through the
 * request's batched loaders, so `_entities` costs one statement per entity type however many
 * representations it carries, and sees only what the viewer may see: another owner's object
 * (or a name that no owner of that name has) resolves to null. Team runs are planned as
 * `nodes` is (src/schema/plan.ts): the runs and what the selection reads below them, one
 * statement.
 */
/** The field names of a key selection: "owner name" → "owner" | "name". */
type KeyFields<S extends string> = S extends `${infer Field} ${infer Rest}`
  ? Field | KeyFields<Rest>
  : S;

/** A key selection with the bound of each of its fields, which the compiler holds to the selection. */
const keyed = <S extends string>(selection: S, bounds: Record<KeyFields<S>, ArgumentBound>) => ({
  selection,
  bounds: bounds as EntityKeys,
});

/**
 * Each entity type's key with the bound of the argument that names its fields elsewhere
 * (`agent(name:)`, `teamRun(execId:)`): `_entities` holds representations to them before
 * execution (hardening/argument-bounds.ts, through schema/index.ts).
 */
const KEYS = {
  Agent: keyed('owner name', { owner: ORACLE_NAME, name: ORACLE_NAME }),
  Team: keyed('owner name', { owner: ORACLE_NAME, name: ORACLE_NAME }),
  TeamRun: keyed('execId', { execId: KEY }),
};

export const ENTITY_KEYS: Readonly<Record<string, EntityKeys>> = Object.fromEntries(
  Object.entries(KEYS).map(([typename, key]) => [typename, key.bounds]),
);

builder.asEntity(AgentRef, {
  key: builder.selection<{ owner: string; name: string }>(KEYS.Agent.selection),
  resolveReference: async ({ owner, name }, context) => {
    const agent = await context.loaders.agentByName.load(name);
    return agent?.owner === owner ? agent : null;
  },
});

builder.asEntity(TeamRef, {
  key: builder.selection<{ owner: string; name: string }>(KEYS.Team.selection),
  resolveReference: async ({ owner, name }, context) => {
    return context.loaders.teamByKey.load(teamKey(owner, name));
  },
});

builder.asEntity(TeamRunRef, {
  key: builder.selection<{ execId: string }>(KEYS.TeamRun.selection),
  resolveReference: ({ execId }, context, info) =>
    context.loaders.plannedRunById(planOf(info, 'TeamRun')).load(execId),
});
