import { GraphQLError, type ValidationRule } from 'graphql';

/**
 * Refuses an alias that starts with `__`, the prefix GraphQL reserves for its own names. Code
 * that reads an answer by its response keys takes such keys for its own: the response cache
 * adds `__responseCacheTypeName` and `__responseCacheId` to every selection and deletes them
 * from the answer (src/production/response-cache.ts), so a client alias of that name vanished
 * from the answer and named another object to the cache (a history answer so aliased was
 * served 13.9 s stale with a 1 s poll interval). A validation rule: the document alone decides,
 * and yoga caches the verdict with the document's.
 */
export const noReservedAliases: ValidationRule = (context) => ({
  Field(node) {
    const alias = node.alias?.value;
    if (alias?.startsWith('__')) {
      context.reportError(
        new GraphQLError(
          `Alias "${alias}" is reserved: aliases may not start with "__" (GraphQL's own names)`,
          { nodes: [node], extensions: { code: 'BAD_USER_INPUT' } },
        ),
      );
    }
  },
});
