import type { GraphQLField } from 'graphql';

/** Where a mutation field says it is an action, in its GraphQL extensions. */
const ACTION_EXTENSION = 'agentGraphAction';

/**
 * Spread into the options of a mutation field that starts work in the database (a RUN_TEAM
 * scheduler job, an agent execution): `t.field({ ...ACTION, type, args, resolve })`. Each
 * such field of an operation, aliases included, is one action: hardening/actions.ts caps
 * them per operation (MAX_ACTIONS_PER_OPERATION) and hardening/rate-limit.ts budgets them
 * per identity (RATE_LIMIT_ACTIONS), on every transport.
 */
export const ACTION = { extensions: { [ACTION_EXTENSION]: true } } as const;

export const isAction = (field: GraphQLField<unknown, unknown> | undefined): boolean =>
  field?.extensions?.[ACTION_EXTENSION] === true;
