import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import DirectivePlugin from '@pothos/plugin-directives';
import FederationPlugin from '@pothos/plugin-federation';
import RelayPlugin, { decodeGlobalID } from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import type { Context } from './context.js';
import { AppError } from './errors.js';
import { authScopes } from './model/viewer.js';
import { bounded, CURSOR, KEY } from './schema/bounds.js';
import { CONNECTION, CONNECTION_ARGS, NODE, PAGE_INFO } from './schema/descriptions.js';
import { needs } from './schema/needs.js';

/** As many ids as the largest page (MAX_PAGE_SIZE in schema/pagination.ts). */
export const MAX_NODES_IDS = 100;

export const builder = new SchemaBuilder<{
  Context: Context;
  AuthScopes: {
    /** Sees every owner, DBA_ views, GV$ and owner filters. */
    admin: boolean;
    /** May read the runtime statistics, which have no owner. */
    statsReader: boolean;
  };
  DefaultFieldNullability: false;
  /** Every connection counts the items that match its filter (schema/pagination.ts). */
  Connection: { totalCount: number };
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  // Federation last, after the plugins that wrap resolvers (scope auth); it changes nothing
  // of toSchema(): only toSubGraphSchema() (schema/index.ts) adds its keys and fields.
  plugins: [
    ScopeAuthPlugin,
    RelayPlugin,
    DataloaderPlugin,
    ComplexityPlugin,
    DirectivePlugin,
    FederationPlugin,
  ],
  scopeAuth: {
    authScopes: (context) => authScopes(context.viewer, context.statsPublic),
    unauthorizedError: (_parent, _context, info) =>
      new AppError(
        'FORBIDDEN',
        `${info.parentType.name}.${info.fieldName} with these arguments needs the admin role`,
      ),
  },
  defaultFieldNullability: false,
  relay: {
    cursorType: 'String',
    clientMutationId: 'omit',
    // A connection's field multiplies its selection by the page size, so edges and nodes
    // must not multiply it again.
    // Their rows pass through to a plan (src/schema/plan.ts): the edges, nodes and node of a
    // connection of history rows read what the rows' fields read.
    nodesOnConnection: {
      description: CONNECTION.nodes,
      complexity: { field: 1, multiplier: 1 },
      ...needs.items(),
    },
    edgesFieldOptions: {
      description: CONNECTION.edges,
      complexity: { field: 1, multiplier: 1 },
      ...needs.items(),
    },
    // Descriptions of what the plugin generates (connection arguments and types, PageInfo,
    // Node), so that GraphiQL's explorer documents them like the hand-written types.
    firstArgOptions: { description: CONNECTION_ARGS.first },
    afterArgOptions: bounded(CURSOR, CONNECTION_ARGS.after),
    lastArgOptions: { description: CONNECTION_ARGS.last },
    beforeArgOptions: bounded(CURSOR, CONNECTION_ARGS.before),
    defaultConnectionTypeOptions: { description: CONNECTION.type },
    defaultEdgeTypeOptions: { description: CONNECTION.edge },
    pageInfoFieldOptions: { description: CONNECTION.pageInfo, ...needs.nothing() },
    nodeFieldOptions: { description: CONNECTION.node, ...needs.items() },
    cursorFieldOptions: { description: CONNECTION.cursor, ...needs.nothing() },
    pageInfoTypeOptions: { description: PAGE_INFO.type },
    hasNextPageFieldOptions: { description: PAGE_INFO.hasNextPage },
    hasPreviousPageFieldOptions: { description: PAGE_INFO.hasPreviousPage },
    startCursorFieldOptions: { description: PAGE_INFO.startCursor },
    endCursorFieldOptions: { description: PAGE_INFO.endCursor },
    nodeTypeOptions: { description: NODE.type },
    idFieldOptions: { description: NODE.id },
    nodeQueryOptions: { description: NODE.node, args: { id: bounded(KEY, NODE.nodeId) } },
    // `nodes` returns one item per id: it is priced, and bounded, like a page.
    nodesQueryOptions: {
      description: NODE.nodes,
      args: { ids: bounded(KEY, NODE.nodesIds, { maxItems: MAX_NODES_IDS }) },
      complexity: (args) => ({ field: 1, multiplier: args.ids.length }),
    },
    // A decoded ID is a string the request never showed as one: the NUL check of
    // hardening/input-values.ts cannot see inside it.
    decodeGlobalID: (globalID) => {
      const decoded = decodeGlobalID(globalID);
      if (decoded.id.includes('\u0000')) {
        throw new AppError('BAD_USER_INPUT', `Invalid global ID: ${globalID}`);
      }
      return decoded;
    },
  },
  // Lists that are not connections (a team's tools, a run's tasks) are short but unbounded.
  // The limit itself is per server (MAX_QUERY_COST), checked in hardening/document-limits.ts.
  complexity: { defaultComplexity: 1, defaultListMultiplier: 10 },
});

builder.queryType({
  description:
    'Read access to Oracle AI Database agents: stored Agent Specs (DBMS_AI_AGENT), Select AI agent teams and their run history (DBMS_CLOUD_AI_AGENT), runtime statistics (V$AGENT_EXEC_STAT) and A2A agent cards.',
});
