import type DataLoader from 'dataloader';
import { builder } from '../builder.js';
import type { Context } from '../context.js';
import { notFound } from '../errors.js';

/**
 * Look-ups by key read through the per-request loaders (`context.loaders`) and nothing else,
 * so that a row reached as a node, by a root field or through a relation is read once per
 * request and batched with the others. A missing key is the type's own error (NOT_FOUND).
 */
export type Missing = (key: string, context: Context) => Error | Promise<Error>;

function lookup<T>(loaderOf: (context: Context) => DataLoader<string, T | null>, missing: Missing) {
  return {
    /** For a root field by key: the row, or the error for a missing one. */
    async one(key: string, context: Context): Promise<T> {
      const row = await loaderOf(context).load(key);
      if (row === null) throw await missing(key, context);
      return row;
    },
    /** relay's `loadManyWithoutCache`, for the `node` and `nodes` fields. */
    many: (keys: string[], context: Context) =>
      nodesOrErrors(keys, loaderOf(context).loadMany(keys), (key) => missing(key, context)),
  };
}

/** NOT_FOUND with this message: the `missing` of a type whose message needs no look-up. */
export const notFoundAs =
  (message: (key: string) => string): Missing =>
  (key) =>
    notFound(message(key));

/**
 * One result per key, an error in place of a missing row, so that one unknown id does not
 * fail the others in `nodes`. graphql-js raises an Error a resolver returns, which is how
 * Pothos' own loadable nodes hand relay DataLoader.loadMany's errors; relay's type for
 * `loadManyWithoutCache` just does not list them.
 */
export async function nodesOrErrors<T>(
  keys: readonly string[],
  rows: Promise<readonly (T | null | Error)[]>,
  missing: (key: string) => Error | Promise<Error>,
): Promise<T[]> {
  const found = await rows;
  return (await Promise.all(found.map((row, i) => row ?? missing(keys[i] as string)))) as T[];
}

/**
 * A node type whose rows are found by key through a per-request loader, with the look-up
 * its by-key root field uses: relay's node/nodes and that field batch together.
 */
export function nodeByKey<T extends object>(
  name: string,
  options: {
    readonly id: (row: T) => string;
    readonly loader: (context: Context) => DataLoader<string, T | null>;
    readonly missing: Missing;
  },
) {
  const found = lookup(options.loader, options.missing);
  const ref = builder.nodeRef<T>(name, {
    id: { resolve: options.id },
    loadManyWithoutCache: found.many,
  });
  return { ref, one: found.one };
}
