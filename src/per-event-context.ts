import {
  createSourceEventStream,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  execute,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from './context.js';
import { mapAsyncIterable } from './live/iterables.js';
import { createLoaders } from './loaders.js';

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

type Result = ExecutionResult | Promise<ExecutionResult>;

/**
 * Results by event, document and the rest of what a result depends on. The hub hands every
 * subscription with the same filter the same event object, and yoga's parse cache gives the
 * same text the same document, so thousands of dashboards watching the same thing cost one
 * execution (and one set of nested statements) per event instead of one each.
 */
const shared = new WeakMap<object, WeakMap<DocumentNode, Map<string, Result>>>();

function executeShared(args: ExecutionArgs, payload: unknown): Result {
  const base = args.contextValue as Context;
  const run = () =>
    execute({
      ...args,
      rootValue: payload,
      contextValue: { ...base, loaders: createLoaders(base.repositories) } satisfies Context,
    });
  if (typeof payload !== 'object' || payload === null) return run();
  let byDocument = shared.get(payload);
  if (!byDocument) {
    byDocument = new WeakMap();
    shared.set(payload, byDocument);
  }
  let results = byDocument.get(args.document);
  if (!results) {
    results = new Map();
    byDocument.set(args.document, results);
  }
  // What a viewer may see depends on its owner and role only; request ids are added to
  // errors per subscription, after this.
  const key = JSON.stringify([
    args.operationName ?? null,
    args.variableValues ?? null,
    base.viewer.owner,
    base.viewer.admin,
  ]);
  let result = results.get(key);
  if (!result) {
    result = run();
    results.set(key, result);
  }
  return result;
}

export async function subscribeWithContextPerEvent(
  args: ExecutionArgs,
): Promise<AsyncGenerator<ExecutionResult, void, void> | ExecutionResult> {
  const stream = await createSourceEventStream(args);
  if (!(Symbol.asyncIterator in stream)) return stream;
  return mapAsyncIterable(stream, (payload) => executeShared(args, payload));
}
