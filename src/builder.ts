import SchemaBuilder from '@pothos/core';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import type { Context } from './context.js';
import { AppError } from './errors.js';

export const builder = new SchemaBuilder<{
  Context: Context;
  AuthScopes: {
    /** Sees every owner, DBA_ views, GV$ and owner filters. */
    admin: boolean;
    /** May read the runtime statistics, which have no owner. */
    statsReader: boolean;
  };
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  plugins: [ScopeAuthPlugin, RelayPlugin, DataloaderPlugin],
  scopeAuth: {
    authScopes: (context) => ({
      admin: context.viewer.admin,
      statsReader: context.viewer.admin || context.statsPublic,
    }),
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
    nodesOnConnection: true,
  },
});

builder.queryType({});
