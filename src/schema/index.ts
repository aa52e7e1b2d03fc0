import { GraphQLLiveDirective } from '@envelop/live-query';
import {
  type GraphQLArgumentExtensions,
  type GraphQLFieldExtensions,
  type GraphQLSchema,
  lexicographicSortSchema,
  specifiedDirectives,
} from 'graphql';
import { builder, MAX_NODES_IDS } from '../builder.js';
import { bounded, REPRESENTATIONS_EXTENSION } from './bounds.js';
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
import { ENTITY_KEYS } from './federation.js';

/**
 * `@live` on a query operation: src/live-queries/ keeps its answer true. graphql-js replaces
 * its own directives (`@include`, `@skip`, `@deprecated`, …) by the list a schema is given,
 * so they are listed too.
 */
const directives = [...specifiedDirectives, GraphQLLiveDirective];

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
 * `_entities` is @apollo/subgraph's field, declared without a bound on its list or a price:
 * its representations get the bound of `nodes(ids:)` and their key fields the bounds of their
 * types' keys (schema/federation.ts), which hardening/argument-bounds.ts enforces before
 * execution like every declared bound; it costs its selection per representation, as
 * `nodes(ids:)` costs it per id.
 */
function boundEntities(schema: GraphQLSchema): GraphQLSchema {
  const entities = schema.getQueryType()?.getFields()._entities;
  const representations = entities?.args.find((arg) => arg.name === 'representations');
  if (entities && representations) {
    const { extensions } = bounded(null, '', { maxItems: MAX_NODES_IDS });
    Object.assign(representations.extensions as GraphQLArgumentExtensions, extensions, {
      [REPRESENTATIONS_EXTENSION]: ENTITY_KEYS,
    });
    Object.assign(entities.extensions as GraphQLFieldExtensions<unknown, unknown>, {
      complexity: (args: { representations: readonly unknown[] }) => ({
        field: 1,
        multiplier: args.representations.length,
      }),
    });
  }
  return schema;
}
