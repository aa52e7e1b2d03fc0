import type DataLoader from 'dataloader';
import type { GraphQLResolveInfo } from 'graphql';
import { builder } from '../builder.js';
import type { Context } from '../context.js';
import { notFound } from '../errors.js';
import { needs } from './needs.js';

/**
 * Look-ups by key read through the per-request loaders (`context.loaders`) and nothing else,
 * so that a row reached as a node, by a root field or through a relation is read once per
 * request and batched with the others. A missing key is the type's own error (NOT_FOUND).
 */
export type Missing = (key: string, context: Context) => Error | Promise<Error>;

/** The loader of a type's rows by key; planned types give the field's plan (src/schema/plan.ts). */
export type LoaderOf<T> = (
  context: Context,
  info?: GraphQLResolveInfo,
) => DataLoader<string, T | null>;

function lookup<T>(loaderOf: LoaderOf<T>, missing: Missing) {
  return {
    /** For a root field by key: the row, or the error for a missing one. */
    async one(key: string, context: Context, info?: GraphQLResolveInfo): Promise<T> {
      const row = await loaderOf(context, info).load(key);
      if (row === null) throw await missing(key, context);
      return row;
    },
    /**
     * relay's `loadWithoutCache`, for the `node` and `nodes` fields: the ids of one `nodes`
     * batch in one loader call. An error in place of a missing row, so that one unknown id
     * does not fail the others (graphql-js raises an Error a resolver returns).
     */
    async each(key: string, context: Context, info: GraphQLResolveInfo): Promise<T | Error> {
      return (await loaderOf(context, info).load(key)) ?? (await missing(key, context));
    },
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
    readonly loader: LoaderOf<T>;
    readonly missing: Missing;
    /** What the `id` field reads (src/schema/needs.ts), for a planned type. */
    readonly idNeeds?: ReturnType<typeof needs.nothing>;
  },
) {
  const found = lookup(options.loader, options.missing);
  const ref = builder.nodeRef<T>(name, {
    id: { resolve: options.id, ...(options.idNeeds ?? needs.nothing()) },
    // relay's own type lists no Error; graphql-js raises one in the node's place.
    loadWithoutCache: (id, context, info) => found.each(id, context, info) as Promise<T>,
  });
  return { ref, one: found.one };
}
