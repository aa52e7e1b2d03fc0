import {
  createSourceEventStream,
  type ExecutionArgs,
  type ExecutionResult,
  execute,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { createLoaders } from '../loaders.js';
import { mapAsyncIterable } from './iterables.js';

/**
 * graphql-js runs every event of a subscription with the context of the subscribe request,
 * so per-request DataLoaders (ours, and those Pothos keys on the context object) would
 * answer later events with rows cached by earlier ones. This replaces graphql-js's
 * subscribe with the same two steps (source stream, then execute per event) but gives each
 * event a new context object with new loaders, as if it were a new request.
 */
export function useContextPerEvent(): Plugin<Context> {
  return {
    onSubscribe({ setSubscribeFn }) {
      setSubscribeFn(subscribeWithContextPerEvent);
    },
  };
}

export async function subscribeWithContextPerEvent(
  args: ExecutionArgs,
): Promise<AsyncGenerator<ExecutionResult, void, void> | ExecutionResult> {
  const stream = await createSourceEventStream(args);
  if (!(Symbol.asyncIterator in stream)) return stream;
  const base = args.contextValue as Context;
  return mapAsyncIterable(stream, (payload) =>
    execute({
      ...args,
      rootValue: payload,
      contextValue: { ...base, loaders: createLoaders(base.repositories) } satisfies Context,
    }),
  );
}
