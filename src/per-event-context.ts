import {
  type ASTNode,
  createSourceEventStream,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  execute,
  type FragmentDefinitionNode,
  getOperationAST,
  Kind,
  print,
  visit,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from './context.js';
import { mapAsyncIterable } from './iterables.js';
import { Channel } from './live/hub.js';
import { createLoaders } from './loaders.js';
import { type SubscriptionShape, subscriptionShape } from './subscription-shape.js';

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

/** What one event shares among the subscriptions it reaches. */
interface EventShare {
  /**
   * One context (and so one set of loaders, and the dataloaders Pothos keys on it) per
   * viewer scope: documents that differ in aliases, field order or page sizes still load
   * the same rows once, so their statements cost no more than one subscription's.
   */
  readonly contexts: Map<string, Context>;
  /** One execution per canonical (or else normalised) document, variables and viewer scope. */
  readonly results: Map<string, Result>;
  /**
   * One projected result per normalised document, variables and viewer scope: identical
   * subscriptions get the same object, which the WebSocket transport then serializes once.
   */
  readonly projections: Map<string, Result>;
}

/**
 * Keyed by event: the hub hands every subscription with the same filter the same event
 * object, so thousands of dashboards watching the same thing cost one execution (and one set
 * of nested statements) per event instead of one each.
 */
const shared = new WeakMap<object, EventShare>();

/** What a viewer may see depends on its owner and role only. */
const scopeOf = (context: Context) => JSON.stringify([context.viewer.owner, context.viewer.admin]);

/**
 * One event's result for one subscription: the same object (or promise) as every identical
 * subscription gets for that event, and as its own event stream yields.
 */
export function executeShared(args: ExecutionArgs, payload: unknown): Result {
  const base = args.contextValue as Context;
  const freshContext = (): Context => ({ ...base, loaders: createLoaders(base.repositories) });
  const run = (contextValue: Context) => execute({ ...args, rootValue: payload, contextValue });
  if (typeof payload !== 'object' || payload === null) return run(freshContext());
  let share = shared.get(payload);
  if (!share) {
    share = { contexts: new Map(), results: new Map(), projections: new Map() };
    shared.set(payload, share);
  }
  const scope = scopeOf(base);
  let context = share.contexts.get(scope);
  if (!context) {
    context = freshContext();
    share.contexts.set(scope, context);
  }
  const key = resultKeyOf(args, scope);
  const { shape } = planOf(args);
  if (shape) {
    const projected = share.projections.get(key);
    if (projected) return projected;
    const canonicalKey = JSON.stringify([shape.key, scope]);
    let canonical = share.results.get(canonicalKey);
    if (!canonical) {
      canonical = execute({
        ...args,
        document: shape.document,
        operationName: undefined,
        variableValues: {},
        rootValue: payload,
        contextValue: context,
      });
      share.results.set(canonicalKey, canonical);
    }
    const sharedContext = context;
    // Errors carry paths in the canonical document's terms: a subscription whose event has
    // errors runs its own document instead (on the same loaders, so no more statements).
    const result = then(canonical, (result) =>
      result.errors || !result.data ? run(sharedContext) : { data: shape.project(result.data) },
    );
    share.projections.set(key, result);
    return result;
  }
  let result = share.results.get(key);
  if (!result) {
    result = run(context);
    share.results.set(key, result);
  }
  return result;
}

/**
 * What identical subscriptions (same document, operation and variables) have in common,
 * worked out at the first event of the first of them and then shared: with thousands of
 * them, one shape (a canonical document) and one result key each was kilobytes apiece.
 */
interface Plan {
  readonly shape: SubscriptionShape | undefined;
  /** The result key for each viewer scope. */
  readonly resultKeys: Map<string, string>;
}

const plans = new WeakMap<DocumentNode, Map<string, Plan>>();
/** A subscription's args stay the same: its plan is looked up once. */
const plansOfArgs = new WeakMap<ExecutionArgs, Plan>();

function planOf(args: ExecutionArgs): Plan {
  let plan = plansOfArgs.get(args);
  if (plan) return plan;
  let byOperation = plans.get(args.document);
  if (!byOperation) {
    byOperation = new Map();
    plans.set(args.document, byOperation);
  }
  const operation = JSON.stringify([args.operationName ?? null, args.variableValues ?? null]);
  plan = byOperation.get(operation);
  if (!plan) {
    plan = {
      shape: subscriptionShape(args.schema, args.document, args.operationName, args.variableValues),
      resultKeys: new Map(),
    };
    byOperation.set(operation, plan);
  }
  plansOfArgs.set(args, plan);
  return plan;
}

/**
 * Identical subscriptions (normalised document, variables, viewer scope) get identical
 * results. Request ids are added to errors per subscription, after this.
 */
function resultKeyOf(args: ExecutionArgs, scope: string): string {
  const { resultKeys } = planOf(args);
  let key = resultKeys.get(scope);
  if (key === undefined) {
    key = JSON.stringify([
      normalisedDocument(args.document, args.operationName),
      args.variableValues ?? null,
      scope,
    ]);
    resultKeys.set(scope, key);
  }
  return key;
}

const then = (result: Result, map: (result: ExecutionResult) => Result): Result =>
  result instanceof Promise ? result.then(map) : map(result);

const normalised = new WeakMap<DocumentNode, Map<string | null, string>>();

/**
 * The operation a subscription runs, printed without its name and without the other
 * operations and unused fragments of its document, so that clients sending the same
 * selection under different operation names, or with different whitespace and comments,
 * share one execution. Aliases and field order stay: they shape the response each client
 * gets (their statements are shared through the per-scope context instead).
 */
function normalisedDocument(document: DocumentNode, operationName: string | null | undefined) {
  let byName = normalised.get(document);
  if (!byName) {
    byName = new Map();
    normalised.set(document, byName);
  }
  let text = byName.get(operationName ?? null);
  if (text === undefined) {
    text = printOperation(document, operationName);
    byName.set(operationName ?? null, text);
  }
  return text;
}

function printOperation(document: DocumentNode, operationName: string | null | undefined): string {
  const operation = getOperationAST(document, operationName);
  if (!operation) return print(document);
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      fragments.set(definition.name.value, definition);
    }
  }
  const used = new Map<string, FragmentDefinitionNode>();
  const collect = (node: ASTNode) =>
    visit(node, {
      FragmentSpread(spread) {
        const fragment = fragments.get(spread.name.value);
        if (fragment && !used.has(spread.name.value)) {
          used.set(spread.name.value, fragment);
          collect(fragment);
        }
      },
    });
  collect(operation);
  return print({
    kind: Kind.DOCUMENT,
    definitions: [
      { ...operation, name: undefined },
      ...[...used.values()].sort((x, y) => x.name.value.localeCompare(y.name.value)),
    ],
  });
}

const channels = new WeakMap<ExecutionArgs, Channel<unknown>>();

/**
 * The live channel a subscription's events come from (a subscription of src/live), by the
 * args it was subscribed with, for a transport that delivers events past the iterator chain
 * (src/transport/websocket.ts).
 */
export const eventChannelOf = (args: ExecutionArgs): Channel<unknown> | undefined =>
  channels.get(args);

export async function subscribeWithContextPerEvent(
  args: ExecutionArgs,
): Promise<AsyncGenerator<ExecutionResult, void, void> | ExecutionResult> {
  const stream = await createSourceEventStream(args);
  if (!(Symbol.asyncIterator in stream)) return stream;
  if (stream instanceof Channel) channels.set(args, stream);
  return mapAsyncIterable(stream, (payload) => executeShared(args, payload));
}
