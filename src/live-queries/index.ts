import { setTimeout as delay } from 'node:timers/promises';
import { useLiveQuery } from '@envelop/live-query';
import { isAsyncIterable, MapperKind, mapSchema } from '@graphql-tools/utils';
import { getLiveDirectiveNode } from '@n1ru4l/graphql-live-query';
import { InMemoryLiveQueryStore } from '@n1ru4l/in-memory-live-query-store';
import { diff } from '@n1ru4l/json-patch-plus';
import {
  defaultFieldResolver,
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  type GraphQLSchema,
  getOperationAST,
  Kind,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { LimitsConfig } from '../config.js';
import type { Context } from '../context.js';
import { boundedResult } from '../hardening/response-size.js';
import { asyncIteratorOf } from '../iterables.js';
import type { LiveHub } from '../live/hub.js';
import type { Metrics } from '../metrics.js';
import { viewerKey, visibilityScope } from '../model/viewer.js';
import { isAction } from '../schema/action.js';
import {
  eventContext,
  finishedResult,
  resultKeyOf,
  type SubscriptionEventsOptions,
} from '../subscription-events.js';
import { KEY_OF_TYPE, keyOfGlobalId, keysOfAction, keysOfCycle } from './keys.js';

/**
 * Live queries: `@live` on any query, kept true by the poller (docs/subscriptions.md, "Live
 * queries"). The Guild's stack does the tracking: `@envelop/live-query` runs a live operation
 * through `@n1ru4l/in-memory-live-query-store`, which records the keys each answer is made of
 * (src/live-queries/keys.ts) and runs it again when one of them is invalidated. Around it:
 *
 * - **What invalidates**: each poll cycle's transitions (their runs, teams and the history
 *   roots), and every action's result (respondToHuman, runTeam, executeAgent), published
 *   through the hub on the poller's channel so that every instance hears it (Redis).
 * - **Coalesced**: a cycle's keys are flushed at once, together with what actions invalidated
 *   since the last flush; actions alone flush at most once per poll interval (leading edge,
 *   then the rest at the interval's end). A flush runs each affected live query once, and a
 *   live query runs again at most once per poll interval: a flush that comes sooner after its
 *   last run (an action's, then the cycle that sees the same change) waits for the interval's
 *   end, and what that run reads then is newer still, so no answer is older than one interval.
 * - **Shared**: identical live queries (normalised document, variables, viewer scope; as
 *   subscription events are grouped, src/subscription-events.ts) run once per flush, with a
 *   context of their own (fresh loaders, request id, statement count), then bounded, masked,
 *   counted and logged once (finishedResult). An answer equal to the last one is not sent.
 * - **Patches** where the request asks (`extensions.liveQueryPatch: "jsondiffpatch"`): the
 *   store's JSON-diff format, computed once per pair of answers for all who share them.
 * - **Capped** per identity and per process (MAX_LIVE_QUERIES_PER_VIEWER, MAX_LIVE_QUERIES):
 *   LIVE_QUERY_LIMIT.
 *
 * Every transport: the operation goes through yoga's enveloped execute, so its limits, budget,
 * timeout (each run) and masking are the query's; SSE and graphql-ws write the stream.
 */
export interface LiveQueriesOptions {
  readonly hub: LiveHub;
  readonly events: SubscriptionEventsOptions;
  readonly limits: LimitsConfig;
  readonly pollIntervalMs: number;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

export interface LiveQueries {
  /** The schema yoga serves: actions publish what they changed, answers say what they hold. */
  readonly schema: GraphQLSchema;
  /** In yoga's list after the hardening plugins, whose execute (timeout) each run goes through. */
  readonly plugins: readonly Plugin[];
  /** Live queries open in this process. */
  readonly size: number;
}

/**
 * Whether a request's document may hold `@live`, read from its text before it is parsed (the
 * response cache decides then): a false positive only leaves an answer uncached.
 */
export function asksLive(context: object): boolean {
  const query = (context as { params?: { query?: unknown } }).params?.query;
  return typeof query === 'string' && query.includes('@live');
}

/** The extension a request sets to receive patches after its first answer. */
export const PATCH_EXTENSION = 'liveQueryPatch';
const PATCH_FORMAT = 'jsondiffpatch';

/** The store's context for each run: ours under a private symbol, and its key collectors. */
interface StoreContext {
  addResourceIdentifier(values: string | readonly string[] | null | undefined): void;
  collectResourceIdentifier(parameter: { typename: string; id: string | number }): void;
}

interface Shared {
  readonly result: ExecutionResult;
  readonly keys: readonly string[];
}

/** Identical live queries of one viewer scope, run once per flush. */
interface Group {
  members: number;
  /** The keys of its last answer and its root fields: a flush that names one makes it stale. */
  keys: ReadonlySet<string>;
  /** `current` no longer shows the state: the next member that asks runs it again. */
  stale: boolean;
  current: Promise<Shared> | undefined;
  last: { result: ExecutionResult; text: string } | undefined;
  /** Runs started, and the latest of them that has finished. */
  runs: number;
  lastRun: number;
  /** When the last run after an invalidation started (performance.now()). */
  rerunAt: number;
  /** A run after an invalidation waits for the interval's end: later flushes join it. */
  deferred: boolean;
}

export function createLiveQueries(schema: GraphQLSchema, options: LiveQueriesOptions): LiveQueries {
  const { hub, limits, logger } = options;
  const store = new InMemoryLiveQueryStore({ buildResourceIdentifier: keyOfGlobalId });
  const groups = new Map<string, Group>();
  const byViewer = new Map<string, number>();
  let open = 0;
  let stopObserving: (() => void) | undefined;

  const invalidate = (keys: readonly string[]) => {
    store.invalidate([...keys]).catch((error: unknown) => {
      logger.warn({ err: error }, 'live query invalidation failed');
    });
  };
  const flusher = new Flusher(options.pollIntervalMs, (keys, source) => {
    options.metrics.liveQueryFlushes.inc({ source });
    for (const group of groups.values()) {
      if (!group.stale && keys.some((key) => group.keys.has(key))) group.stale = true;
    }
    invalidate(keys);
  });

  const served = mapSchema(schema, {
    [MapperKind.OBJECT_FIELD]: (field, _name, typeName) => {
      const keyOf = KEY_OF_TYPE[typeName];
      if (keyOf) {
        return {
          ...field,
          extensions: {
            ...field.extensions,
            liveQuery: {
              collectResourceIdentifiers: (source: Record<string, unknown>) => keyOf(source),
            },
          },
        };
      }
      if (!isAction(field as never)) return field;
      const resolve = field.resolve ?? defaultFieldResolver;
      return {
        ...field,
        resolve: async (source, args, context, info) => {
          const result = await resolve(source, args, context, info);
          void hub.invalidate(keysOfAction(result));
          return result;
        },
      };
    },
  });

  /** Runs the group's operation once per flush, for every member that asks in it. */
  const sharedExecute =
    (execute: (args: ExecutionArgs) => unknown) =>
    (args: ExecutionArgs): unknown => {
      const storeContext = args.contextValue as Partial<StoreContext> | undefined;
      if (typeof storeContext?.addResourceIdentifier !== 'function') return execute(args);
      const tracked = storeContext as StoreContext;
      const original = originalOf(tracked);
      const group = groups.get(groupKeyOf(args, original));
      if (!group) return execute(args);
      if (!group.current) {
        group.current = runShared(group, execute, args, tracked, original);
      } else if (group.stale) {
        group.stale = false;
        if (!group.deferred) group.current = rerun(group, execute, args, tracked, original);
      }
      return group.current.then(({ result, keys }) => {
        tracked.addResourceIdentifier(keys);
        return result;
      });
    };

  /** Runs the group again, once its last run after an invalidation is one interval old. */
  async function rerun(
    group: Group,
    execute: (args: ExecutionArgs) => unknown,
    args: ExecutionArgs,
    tracked: StoreContext,
    original: Context,
  ): Promise<Shared> {
    const wait = group.rerunAt + options.pollIntervalMs - performance.now();
    if (wait > 0) {
      group.deferred = true;
      try {
        await delay(wait, undefined, { ref: false });
      } finally {
        group.deferred = false;
      }
      // Every member left meanwhile (or the server stopped): nobody reads a run.
      if (group.members === 0) return { result: group.last?.result ?? {}, keys: [...group.keys] };
    }
    group.rerunAt = performance.now();
    return runShared(group, execute, args, tracked, original);
  }

  async function runShared(
    group: Group,
    execute: (args: ExecutionArgs) => unknown,
    args: ExecutionArgs,
    tracked: StoreContext,
    original: Context,
  ): Promise<Shared> {
    const context = eventContext(options.events.repositoriesFor, original);
    const keys = new Set<string>();
    // The store's resolvers read our context from under its symbol: this run's own.
    const contextValue = Object.assign(Object.create(context) as object, tracked, {
      [symbolOf(tracked)]: context,
      collectResourceIdentifier: (parameter: { typename: string; id: string | number }) =>
        keys.add(keyOfGlobalId(parameter)),
      addResourceIdentifier: (values: string | readonly string[] | null | undefined) => {
        if (typeof values === 'string') keys.add(values);
        else for (const value of values ?? []) keys.add(value);
      },
    });
    const startedAt = performance.now();
    const flushes = flusher.count;
    const run = ++group.runs;
    // A throw becomes the answer's error (finishedResult), never an answer that does not come.
    const executed = Promise.resolve().then(
      () => execute({ ...args, contextValue }) as ExecutionResult,
    );
    const finished = await finishedResult(options.events, args, context, startedAt, executed);
    const text = JSON.stringify(finished);
    // Unchanged: the same object, which each member then skips. A run overtaken by a later
    // one (its members drop its answer) leaves the last answer as it is.
    let result = finished;
    if (run > group.lastRun) {
      group.lastRun = run;
      if (group.last?.text !== text) group.last = { result: finished, text };
      result = group.last.result;
    }
    for (const root of rootKeysOf(args)) keys.add(root);
    group.keys = keys;
    // A flush during the run may have come before the store tracked what this answer holds,
    // and the answer may predate the change: its members run again once they track it.
    const missed = flusher.keysSince(flushes).filter((key) => keys.has(key));
    if (missed.length > 0) {
      group.stale = true;
      setImmediate(() => invalidate(missed));
    }
    return { result, keys: [...keys] };
  }

  const observe = () => {
    stopObserving = hub.observeCycles(
      (message) => flusher.cycle(keysOfCycle(message)),
      (keys) => flusher.action(keys),
    );
  };

  const refusal = (viewer: string): GraphQLError | undefined => {
    if (open >= limits.maxLiveQueries) {
      return limitError(
        `Too many live queries on this server: at most ${limits.maxLiveQueries} (MAX_LIVE_QUERIES); retry later, or ask without @live`,
        'MAX_LIVE_QUERIES',
      );
    }
    if ((byViewer.get(viewer) ?? 0) >= limits.maxLiveQueriesPerViewer) {
      return limitError(
        `Too many live queries for this identity: at most ${limits.maxLiveQueriesPerViewer} (MAX_LIVE_QUERIES_PER_VIEWER); end one first`,
        'MAX_LIVE_QUERIES_PER_VIEWER',
      );
    }
    return undefined;
  };

  /** Counts a live query in (caps, its group, the poller); the returned function counts it out. */
  const enter = (args: ExecutionArgs, context: Context): (() => void) => {
    const viewer = viewerKey(context.viewer);
    const key = groupKeyOf(args, context);
    let group = groups.get(key);
    if (!group) {
      group = {
        members: 0,
        keys: new Set(),
        stale: false,
        current: undefined,
        last: undefined,
        runs: 0,
        lastRun: 0,
        rerunAt: Number.NEGATIVE_INFINITY,
        deferred: false,
      };
      groups.set(key, group);
    }
    group.members++;
    byViewer.set(viewer, (byViewer.get(viewer) ?? 0) + 1);
    open++;
    options.metrics.liveQueries.inc();
    if (open === 1) observe();
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const members = (group as Group).members - 1;
      (group as Group).members = members;
      if (members === 0) groups.delete(key);
      const ofViewer = (byViewer.get(viewer) ?? 1) - 1;
      if (ofViewer > 0) byViewer.set(viewer, ofViewer);
      else byViewer.delete(viewer);
      open--;
      options.metrics.liveQueries.dec();
      if (open === 0) {
        stopObserving?.();
        stopObserving = undefined;
      }
    };
  };

  /** What a live operation's execute answers: its stream, delivered, patched and capped. */
  const delivered =
    (execute: (args: ExecutionArgs) => unknown, patches: boolean) =>
    async (args: ExecutionArgs): Promise<unknown> => {
      const context = args.contextValue as Context;
      const result = await execute(args);
      if (!isAsyncIterable(result)) return result;
      const stream = result as AsyncIterable<ExecutionResult>;
      const refused = refusal(viewerKey(context.viewer));
      if (refused) {
        // The store runs nothing before the stream is first read.
        await stream[Symbol.asyncIterator]().return?.();
        return { errors: [refused] };
      }
      return delivery(stream, patches, enter(args, context), limits.maxResponseBytes);
    };
  // @envelop/live-query's plugin, of which only its validation rule (no @live beside
  // @defer/@stream) is taken whole: its execute hook is the store's, below.
  const liveQuery = useLiveQuery({ liveQueryStore: store });
  const plugin: Plugin = {
    onValidate: liveQuery.onValidate,
    // Only a live operation's execute goes through the store, the groups and the delivery:
    // every other operation (nearly all) keeps the execute it has, with no wrapper around it.
    onExecute({ args, executeFn, setExecuteFn }) {
      const patches = patchFormatOf(args.contextValue as unknown as Context);
      if (patches instanceof GraphQLError) {
        setExecuteFn(() => ({ errors: [patches] }));
        return;
      }
      if (!isLiveOperation(args)) return;
      const execute = store.makeExecute(
        sharedExecute(executeFn as (args: ExecutionArgs) => unknown) as never,
      );
      setExecuteFn(delivered(execute, patches) as never);
    },
  };
  return {
    schema: served,
    // envelop's plugin type, which yoga's extends with its HTTP hooks.
    plugins: [plugin],
    get size() {
      return open;
    },
  };
}

/**
 * Invalidations, coalesced: a poll cycle flushes at once (with what actions left pending);
 * actions flush at most once per interval. Each flush runs each affected live query once.
 */
class Flusher {
  /** Flushes so far. */
  count = 0;
  /** The keys of the latest flushes, by number, for a run that was under way meanwhile. */
  private readonly recent = new Map<number, readonly string[]>();
  private pending = new Set<string>();
  private lastFlush = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly invalidate: (keys: string[], source: 'cycle' | 'action') => void,
  ) {}

  cycle(keys: readonly string[]): void {
    for (const key of keys) this.pending.add(key);
    this.flush('cycle');
  }

  action(keys: readonly string[]): void {
    for (const key of keys) this.pending.add(key);
    const wait = this.lastFlush + this.intervalMs - performance.now();
    if (wait <= 0) this.flush('action');
    else this.timer ??= setTimeout(() => this.flush('action'), wait);
  }

  private flush(source: 'cycle' | 'action'): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const keys = [...this.pending];
    this.pending = new Set();
    this.lastFlush = performance.now();
    this.count++;
    this.recent.set(this.count, keys);
    this.recent.delete(this.count - RECENT_FLUSHES);
    this.invalidate(keys, source);
  }

  /** The keys flushed after flush number `count` (as far back as RECENT_FLUSHES). */
  keysSince(count: number): string[] {
    const keys: string[] = [];
    for (let n = count + 1; n <= this.count; n++) keys.push(...(this.recent.get(n) ?? []));
    return keys;
  }
}

/** Flushes remembered for runs under way: far more than one run lasts (REQUEST_TIMEOUT_MS). */
const RECENT_FLUSHES = 256;

/** The store's keys of an operation's root fields (`Query.<field>`), through fragments. */
function rootKeysOf(args: ExecutionArgs): string[] {
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation) return [];
  const fragments = new Map(
    args.document.definitions.flatMap((d) =>
      d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [],
    ),
  );
  const keys = new Set<string>();
  const seen = new Set<string>();
  const collect = (selections: SelectionSetNode) => {
    for (const selection of selections.selections) {
      if (selection.kind === Kind.FIELD) keys.add(`Query.${selection.name.value}`);
      else if (selection.kind === Kind.INLINE_FRAGMENT) collect(selection.selectionSet);
      else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) collect(fragment.selectionSet);
      }
    }
  };
  collect(operation.selectionSet);
  return [...keys];
}

/**
 * Whether the operation is a query marked `@live`, as the store decides it;
 * `@live(if: false)` is the store's to run as a plain query.
 */
function isLiveOperation(args: ExecutionArgs): boolean {
  const operation = getOperationAST(args.document, args.operationName);
  return operation ? getLiveDirectiveNode(operation) !== null : false;
}

/** Identical live queries: the subscriptions' grouping (normalised document, variables, scope). */
const groupKeyOf = (args: ExecutionArgs, context: Context) =>
  resultKeyOf(args, visibilityScope(context.viewer));

/**
 * The store keeps the context it was given under a symbol of its own, and hands every run the
 * same one; each run here needs a context of its own (fresh loaders, and the Pothos
 * dataloaders keyed on the context object), hence the one symbol of its run context.
 */
function symbolOf(tracked: StoreContext): symbol {
  const [symbol] = Object.getOwnPropertySymbols(tracked);
  if (!symbol) throw new Error('the live query store no longer passes its context under a symbol');
  return symbol;
}

const originalOf = (tracked: StoreContext) =>
  (tracked as unknown as Record<symbol, Context>)[symbolOf(tracked)] as Context;

function limitError(message: string, limit: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'LIVE_QUERY_LIMIT', limit } });
}

/** Whether the request asked for patches (true), not (false), or for a format there is not. */
function patchFormatOf(context: Context): boolean | GraphQLError {
  const params = (context as { params?: { extensions?: Record<string, unknown> } }).params;
  const format = params?.extensions?.[PATCH_EXTENSION];
  if (format === undefined || format === null) return false;
  if (format === PATCH_FORMAT) return true;
  return new GraphQLError(
    `extensions.${PATCH_EXTENSION} must be "${PATCH_FORMAT}" (or absent, for whole answers)`,
    { extensions: { code: 'BAD_USER_INPUT' } },
  );
}

/** A whole answer as sent: without the store's `isLive` mark, serialised once for all. */
const wholes = new WeakMap<ExecutionResult, ExecutionResult>();
/** Patch messages by previous answer, next answer and revision: one object for all who share them. */
const patchMessages = new WeakMap<
  ExecutionResult,
  WeakMap<ExecutionResult, Map<number, ExecutionResult | null>>
>();

function whole(result: ExecutionResult, maxBytes: number): ExecutionResult {
  let sent = wholes.get(result);
  if (!sent) {
    sent = { ...result };
    delete (sent as { isLive?: boolean }).isLive;
    sent = boundedResult(sent, maxBytes);
    wholes.set(result, sent);
  }
  return sent;
}

/** Fields that name an object within its list, in the order they are tried. */
const IDENTIFYING = ['id', 'execId', 'invocationId', 'conId', 'name', 'cursor'] as const;

/**
 * How the diff matches the items of a list between two answers: by a field that names the
 * object (a run's execId, a team's name; the store's own generateJSONDiffPatch knows only
 * `id`, `node` and `cursor`, so a list of runs shifted by a new one became a whole new list),
 * else by position. An item matched is then diffed field by field.
 */
function objectHash(object: object, index?: number): string {
  const fields = object as Record<string, unknown>;
  for (const field of IDENTIFYING) {
    const value = fields[field];
    if (typeof value === 'string' || typeof value === 'number') return `${field}:${value}`;
  }
  const node = fields.node;
  if (typeof node === 'object' && node !== null) return objectHash(node);
  return `#${index ?? ''}`;
}

/**
 * The patch from one answer to the next in the store's JSON-diff format
 * (`{ revision, patch }`, which @n1ru4l/graphql-live-query-patch-jsondiffpatch's
 * applyLiveQueryJSONDiffPatch reapplies), or null when the data did not change.
 */
function patchMessage(
  previous: ExecutionResult,
  next: ExecutionResult,
  revision: number,
): ExecutionResult | null {
  let byNext = patchMessages.get(previous);
  if (!byNext) {
    byNext = new WeakMap();
    patchMessages.set(previous, byNext);
  }
  let byRevision = byNext.get(next);
  if (!byRevision) {
    byRevision = new Map();
    byNext.set(next, byRevision);
  }
  let message = byRevision.get(revision);
  if (message === undefined) {
    const patch = diff({ left: previous.data ?? {}, right: next.data ?? {} }, { objectHash });
    message =
      patch === undefined && !next.errors
        ? null
        : ({
            revision,
            patch: patch ?? {},
            ...(next.errors ? { errors: next.errors } : {}),
            ...(next.extensions ? { extensions: next.extensions } : {}),
          } as ExecutionResult);
    byRevision.set(revision, message);
  }
  return message;
}

/**
 * The store's answers as the client receives them: each new answer whole, or the first whole
 * and then patches; an answer that is the same object as the last (unchanged) is skipped.
 * Ending the stream (the client went away, the token expired) counts the live query out.
 */
function delivery(
  source: AsyncIterable<ExecutionResult>,
  patches: boolean,
  leave: () => void,
  maxBytes: number,
): AsyncGenerator<ExecutionResult, void, void> {
  const iterator = source[Symbol.asyncIterator]();
  let last: ExecutionResult | undefined;
  let revision = 0;
  const stop = async () => {
    leave();
    await iterator.return?.();
  };
  return asyncIteratorOf<ExecutionResult>(async () => {
    for (;;) {
      const step = await iterator.next();
      if (step.done) {
        leave();
        return { done: true, value: undefined } as const;
      }
      const answer = step.value;
      if (answer === last) continue;
      const previous = last;
      last = answer;
      if (!patches) return { done: false, value: whole(answer, maxBytes) };
      if (!previous) {
        revision = 1;
        const first = whole(answer, maxBytes);
        return { done: false, value: { ...first, revision: 1 } as ExecutionResult };
      }
      const message = patchMessage(previous, answer, revision + 1);
      if (!message) continue;
      revision++;
      return { done: false, value: message };
    }
  }, stop);
}
