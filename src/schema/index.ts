import { GraphQLLiveDirective } from '@envelop/live-query';
import {
  type GraphQLArgumentExtensions,
  type GraphQLSchema,
  lexicographicSortSchema,
} from 'graphql';
import { builder, MAX_NODES_IDS } from '../builder.js';
import { bounded } from './bounds.js';
import './scalars.js';
import './agent.js';
import './exec-stat.js';
import './team.js';
import './team-run.js';
import './task-run.js';
import './tool-call.js';
import './human-wait.js';
import './agent-card.js';
import './subscription.js';
import './team-actions.js';
import './agent-execution.js';
import './team-activity.js';
import './federation.js';

/** `@live` on a query operation: src/live-queries/ keeps its answer true. */
const directives = [GraphQLLiveDirective];

export const schema = lexicographicSortSchema(builder.toSchema({ directives }));

let subgraph: GraphQLSchema | undefined;

/**
 * The same schema as an Apollo Federation 2 subgraph (FEDERATION=true): the entity keys of
 * schema/federation.ts, `_entities` and `_service`. Built on first use.
 */
export function subgraphSchema(): GraphQLSchema {
  subgraph ??= boundEntities(
    builder.toSubGraphSchema({
      linkUrl: 'https://specs.apollo.dev/federation/v2.6',
      federationDirectives: ['@key'],
      directives,
    }),
  );
  return subgraph;
}

/**
 * `_entities` is @apollo/subgraph's field, declared without a bound on its list: its
 * representations get the bound of `nodes(ids:)`, which hardening/argument-bounds.ts
 * enforces before execution like every declared bound.
 */
function boundEntities(schema: GraphQLSchema): GraphQLSchema {
  const representations = schema
    .getQueryType()
    ?.getFields()
    ._entities?.args.find((arg) => arg.name === 'representations');
  if (representations) {
    const { extensions } = bounded(null, '', { maxItems: MAX_NODES_IDS });
    Object.assign(representations.extensions as GraphQLArgumentExtensions, extensions);
  }
  return schema;
}
