import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import RelayPlugin from '@pothos/plugin-relay';
import type { Context } from './context.js';

export const builder = new SchemaBuilder<{
  Context: Context;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  plugins: [RelayPlugin, DataloaderPlugin, ComplexityPlugin],
  defaultFieldNullability: false,
  relay: {
    cursorType: 'String',
    clientMutationId: 'omit',
    // A connection's field multiplies its selection by the page size, so edges and nodes
    // must not multiply it again.
    nodesOnConnection: { complexity: { field: 1, multiplier: 1 } },
    edgesFieldOptions: { complexity: { field: 1, multiplier: 1 } },
  },
  // Lists that are not connections (a team's tools, a run's tasks) are short but unbounded.
  // The limit itself is per server (MAX_QUERY_COST), checked in hardening/document-limits.ts.
  complexity: { defaultComplexity: 1, defaultListMultiplier: 10 },
});

builder.queryType({});
