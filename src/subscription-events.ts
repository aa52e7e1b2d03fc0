import { randomUUID } from 'node:crypto';
import {
  type ASTNode,
  createSourceEventStream,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FragmentDefinitionNode,
  getOperationAST,
  Kind,
  print,
  visit,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Execute } from './compiled-queries.js';
import { type Context, operationState, type RepositoriesFor } from './context.js';
import { boundedResult } from './hardening/response-size.js';
import { mapAsyncIterable } from './iterables.js';
import { Channel } from './live/hub.js';
import { asGraphQLError, type MaskError, withRequestId } from './masking.js';
import { visibilityScope } from './model/viewer.js';
import { type EventRecord, operationName, outcomeOf } from './request-log.js';
import { withStatements } from './statement-log.js';

/**
 * The one path every subscription event takes, whatever the transport (docs/architecture.md,
 * "Where an event goes"): executed once per group of identical subscriptions and viewer
 * scope, with a context of its own (a request id, loaders and a statement count that belong
 * to the event), then bounded (MAX_RESPONSE_BYTES), masked (maskError, with the event's
 * request id), counted and logged (request-log.ts) — once for the group. What comes out is
 * what every subscriber of the group receives: yoga's SSE writer and graphql-ws get it
 * through each subscription's iterator, and transport/shared-delivery.ts writes it to many
 * sockets at once past that iterator (eventSourceOf).
 *
 * Yoga plugins join this path by being in yoga's plugin list (src/yoga.ts): their subscribe
 * hooks run for every transport, graphql-ws included, since it subscribes through yoga's
 * envelop. Per-event work belongs here, once per group, not in a plugin's per-subscription
 * onSubscribeResult/onNext (which the shared write loop does not run);
 * test/live/one-path.test.ts holds the transports' events equal.
 */
export interface SubscriptionEventsOptions {
  /**
   * How an event is executed: the executor of queries and mutations (src/compiled-queries.ts)
   * under the request timeout (hardening/request-timeout.ts withTimeout), so an event's
   * resolvers see cancellation as a query's do, in their context.
   */
  readonly execute: Execute;
  readonly repositoriesFor: RepositoriesFor;
  readonly maskError: MaskError;
  readonly maxResponseBytes: number;
  /** Counts and logs each event (request-log.ts). */
  readonly record: (event: EventRecord) => void;
}

type Result = ExecutionResult | Promise<ExecutionResult>;

/** Where a subscription's events come from, and what each becomes for its subscribers. */
export interface EventSource {
  readonly channel: Channel<unknown>;
  /** The event as every subscription identical to this one receives it (the same object). */
  result(event: unknown): Result;
}

const sources = new WeakMap<ExecutionArgs, EventSource>();

/**
 * The live channel of a subscription (by the args it was subscribed with) and its events'
 * one path, for a transport that writes events past the iterator chain.
 */
export const eventSourceOf = (args: ExecutionArgs): EventSource | undefined => sources.get(args);

/**
 * graphql-js runs every event of a subscription with the context of the subscribe request,
 * so per-request DataLoaders (ours, and those Pothos keys on the context object) would
 * answer later events with rows cached by earlier ones, and the event's statements would
 * count into the subscribe request. This replaces graphql-js's subscribe with the same two
 * steps on this path: the source stream (graphql-js's createSourceEventStream, which calls
 * only the field's `subscribe`), then each event executed by the one executor of queries and
 * mutations (`options.execute`).
 */
export function useSubscriptionEvents(options: SubscriptionEventsOptions): Plugin<Context> {
  const path = new EventPath(options);
  const subscribe = async (
    args: ExecutionArgs,
  ): Promise<AsyncGenerator<ExecutionResult, void, void> | ExecutionResult> => {
    const stream = await createSourceEventStream(args);
    if (!(Symbol.asyncIterator in stream)) return stream;
    const result = (event: unknown) => path.result(args, event);
    if (stream instanceof Channel) sources.set(args, { channel: stream, result });
    return mapAsyncIterable(stream, result);
  };
  return {
    onSubscribe({ setSubscribeFn }) {
      setSubscribeFn(subscribe);
    },
  };
}

/** What one event shares among the subscriptions it reaches. */
interface EventShare {
  /**
   * One context (and so one set of loaders, and the dataloaders Pothos keys on it) per
   * viewer scope: documents that differ in aliases, field order or page sizes still load
   * the same rows once, so their statements cost no more than one subscription's.
   */
  readonly contexts: Map<string, Context>;
  /**
   * One finished result per normalised document, variables and viewer scope: identical
   * subscriptions get the same object, which the WebSocket transport then serializes once.
   */
  readonly results: Map<string, Promise<ExecutionResult>>;
}

class EventPath {
  /**
   * Keyed by event: the hub hands every subscription with the same filter the same event
   * object, so thousands of dashboards watching the same thing cost one execution (and one
   * set of nested statements) per event instead of one each.
   */
  private readonly shared = new WeakMap<object, EventShare>();

  constructor(private readonly options: SubscriptionEventsOptions) {}

  result(args: ExecutionArgs, payload: unknown): Promise<ExecutionResult> {
    const base = args.contextValue as Context;
    if (typeof payload !== 'object' || payload === null) {
      const context = this.eventContext(base);
      return this.finish(args, context, performance.now(), this.run(args, payload, context));
    }
    let share = this.shared.get(payload);
    if (!share) {
      share = { contexts: new Map(), results: new Map() };
      this.shared.set(payload, share);
    }
    const scope = visibilityScope(base.viewer);
    const key = resultKeyOf(args, scope);
    const known = share.results.get(key);
    if (known) return known;
    let context = share.contexts.get(scope);
    if (!context) {
      context = this.eventContext(base);
      share.contexts.set(scope, context);
    }
    const result = this.finish(args, context, performance.now(), this.run(args, payload, context));
    share.results.set(key, result);
    return result;
  }

  private eventContext(base: Context): Context {
    return eventContext(this.options.repositoriesFor, base);
  }

  private async run(
    args: ExecutionArgs,
    payload: unknown,
    contextValue: Context,
  ): Promise<ExecutionResult> {
    return this.options.execute({ ...args, rootValue: payload, contextValue });
  }

  /** The event's statements go with it when they are logged (src/statement-log.ts). */
  private async finish(
    args: ExecutionArgs,
    context: Context,
    startedAt: number,
    executed: Promise<ExecutionResult>,
  ): Promise<ExecutionResult> {
    const result = await finishedResult(this.options, args, context, startedAt, executed);
    return withStatements(result, context.usage);
  }
}

/**
 * A context of an event's own (or of one run of a live query, src/live-queries/): its
 * request id, loaders and statement count, for the viewer of `base`. No request: what it
 * runs is shared by every identical subscriber, so one client going away must not stop it.
 */
export function eventContext(repositoriesFor: RepositoriesFor, base: Context): Context {
  const { request: _request, ...rest } = base as Context & { request?: unknown };
  return {
    ...rest,
    requestId: randomUUID(),
    // An event's statements are logged when its subscription's are (src/statement-log.ts).
    ...operationState(repositoriesFor, base.viewer, base.usage.log !== undefined),
  };
}

/**
 * Bounded, masked with the event's request id, counted and logged: what the subscribers of a
 * group receive (and the live queries of a group, src/live-queries/).
 */
export async function finishedResult(
  options: SubscriptionEventsOptions,
  args: ExecutionArgs,
  context: Context,
  startedAt: number,
  executed: Promise<ExecutionResult>,
): Promise<ExecutionResult> {
  const { maskError, maxResponseBytes } = options;
  let result: ExecutionResult;
  try {
    result = boundedResult(await executed, maxResponseBytes);
  } catch (error) {
    result = { errors: [asGraphQLError(error)] };
  }
  if (result.errors?.length) {
    result = {
      ...result,
      errors: result.errors.map((error) => maskError(withRequestId(error, context.requestId))),
    };
  }
  options.record({
    requestId: context.requestId,
    operation: operationName(args.document, args.operationName),
    startedAt,
    statements: context.usage.statements,
    outcome: outcomeOf(result),
  });
  return result;
}

/**
 * The result key of each viewer scope, shared by identical subscriptions (same document,
 * operation and variables), worked out at the first event of the first of them: with
 * thousands of subscriptions, one key string each was kilobytes apiece.
 */
type ResultKeys = Map<string, string>;

const keysByDocument = new WeakMap<DocumentNode, Map<string, ResultKeys>>();
/** A subscription's args stay the same: its keys are looked up once. */
const keysOfArgs = new WeakMap<ExecutionArgs, ResultKeys>();

function resultKeysOf(args: ExecutionArgs): ResultKeys {
  let keys = keysOfArgs.get(args);
  if (keys) return keys;
  let byOperation = keysByDocument.get(args.document);
  if (!byOperation) {
    byOperation = new Map();
    keysByDocument.set(args.document, byOperation);
  }
  const operation = JSON.stringify([args.operationName ?? null, args.variableValues ?? null]);
  keys = byOperation.get(operation);
  if (!keys) {
    keys = new Map();
    byOperation.set(operation, keys);
  }
  keysOfArgs.set(args, keys);
  return keys;
}

/**
 * Identical subscriptions (normalised document, variables, viewer scope) get identical
 * results. Request ids are added to errors per subscription, after this.
 */
export function resultKeyOf(args: ExecutionArgs, scope: string): string {
  const keys = resultKeysOf(args);
  let key = keys.get(scope);
  if (key === undefined) {
    key = JSON.stringify([
      normalisedDocument(args.document, args.operationName),
      args.variableValues ?? null,
      scope,
    ]);
    keys.set(scope, key);
  }
  return key;
}

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
  const fragments = fragmentsOf(document);
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

/** The fragment definitions of a document, by name. */
function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      fragments.set(definition.name.value, definition);
    }
  }
  return fragments;
}
