import { createHash } from 'node:crypto';
import { type Cache, type CacheEntityRecord, useResponseCache } from '@envelop/response-cache';
import { encodeGlobalID } from '@pothos/plugin-relay';
import {
  type DocumentNode,
  type ExecutionArgs,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  getOperationAST,
  getVariableValues,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  print,
  visit,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Context } from '../context.js';
import type { CycleMessage, LiveHub } from '../live/hub.js';
import { asksLive } from '../live-queries/index.js';
import type { Metrics } from '../metrics.js';
import { teamIds } from '../model/team.js';
import { answerScope } from '../model/viewer.js';
import { memoryCache, redisCache } from './cache-stores.js';

/**
 * Types read from the catalog (agents, teams, their tools and A2A cards), which change when
 * someone creates or drops one; results made of them alone live RESPONSE_CACHE_TTL_MS. Every
 * other type (history, waits, statistics, and any type added later) is held at most one
 * poll interval, so that no cached answer is older than what the poller has seen.
 */
const CATALOG_TYPES = new Set([
  'Query',
  'Mutation',
  'Subscription',
  'PageInfo',
  'Agent',
  'AgentConnection',
  'AgentEdge',
  'AgentParameter',
  'CallContract',
  'Team',
  'TeamConnection',
  'TeamEdge',
  'TeamTool',
  'A2AAgentListing',
  'AgentCard',
  'AgentCardCapabilities',
  'AgentCardExtension',
  'AgentCardInterface',
  'AgentCardProvider',
  'AgentSkill',
  'CardDrift',
]);

/**
 * The response keys the cache plugin adds to every selection set and deletes from the answer
 * (@envelop/response-cache): a client alias of the same name would be deleted as well and be
 * read as the object's type or id. hardening/reserved-aliases.ts refuses aliases like them.
 */
export const CACHE_METADATA_PREFIX = '__responseCache';

export interface ResponseCacheOptions {
  readonly config: Config;
  readonly schema: GraphQLSchema;
  readonly live: LiveHub;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

export interface ResponseCache {
  readonly plugins: readonly Plugin[];
  /** Stops following the poller and disconnects from Redis. */
  close(): Promise<void>;
}

/**
 * Query results through @envelop/response-cache, keyed by what the operation uses and by what
 * decides the viewer's answer (answerScope), in Redis when REDIS_URL is set (shared by every
 * instance) or in memory, bounded by bytes. The poller's cycle messages evict the results
 * that contain a run that changed and its team (the plugin's entity invalidation by
 * __typename and id), on every instance, through the channel the subscriptions use.
 *
 * The cache is optional: a look-up, store or eviction that fails (Redis down or stalled) is
 * counted (agentgraph_response_cache_errors_total) and the query runs uncached.
 */
export function createResponseCache(options: ResponseCacheOptions): ResponseCache {
  const { config, metrics, logger } = options;
  const ttl = config.production.responseCacheTtlMs;
  const historyTtl = Math.min(ttl, config.live.pollIntervalMs);
  const live = config.live;
  const redis = live.redisUrl
    ? new Redis(live.redisUrl, {
        username: live.redisUsername,
        password: live.redisPassword,
        keyPrefix: `${live.redisPrefix}response-cache:`,
        // A stalled Redis fails the command (the query then runs uncached) instead of holding
        // it, and a lost connection fails it at once rather than queueing it for later.
        commandTimeout: live.redisCommandTimeoutMs,
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
      })
    : undefined;
  redis?.on('error', (error: Error) =>
    logger.warn({ err: error }, 'Redis connection error (response cache)'),
  );
  const store = redis
    ? redisCache(redis, ttl)
    : memoryCache(config.production.responseCacheMaxBytes, (bytes) =>
        metrics.responseCacheBytes.set(bytes),
      );
  const cache = guarded(store.cache, metrics, logger);
  const ttlPerSchemaCoordinate: Record<string, number> = {};
  for (const type of Object.values(options.schema.getTypeMap())) {
    if (isObjectType(type) && !type.name.startsWith('__') && !CATALOG_TYPES.has(type.name)) {
      ttlPerSchemaCoordinate[type.name] = historyTtl;
    }
  }
  const stopObserving = options.live.observeCycles((message) => {
    const entities = changedEntities(message);
    if (entities.length > 0) cache.invalidate(entities);
  });
  const plugin = useResponseCache<Context>({
    cache,
    ttl,
    ttlPerSchemaCoordinate,
    // Yoga builds our context (with the viewer) after authentication; a request without one
    // never reaches execution.
    session: (context) => answerScope(context.viewer, context.statsPublic),
    // Nor for a live query, whose answers are a stream kept true (src/live-queries/).
    enabled: (context) => 'viewer' in context && !asksLive(context),
    getDocumentString: usedOperation,
    buildResponseCacheKey: ({ documentString, sessionId }) =>
      createHash('sha256')
        .update(`${sessionId ?? ''}\u0000${documentString}`)
        .digest('base64url'),
    shouldCacheResult: ({ result }) => !result.errors?.length,
    // Mutations are never cached, and evict the objects they return (the run an answer
    // resumed); `guarded` keeps that from evicting whole types.
    invalidateViaMutation: true,
    includeExtensionMetadata: false,
  });
  return {
    plugins: [plugin as Plugin, evictionsBeforeAnswers(cache)],
    async close() {
      stopObserving();
      store.close();
      redis?.disconnect();
    },
  };
}

/** The cache entities a cycle's transitions make stale: each run, and its team's stats and lists. */
function changedEntities(message: CycleMessage): { typename: string; id: string }[] {
  const entities = new Map<string, { typename: string; id: string }>();
  for (const { run } of message.transitions) {
    const runId = encodeGlobalID('TeamRun', run.execId);
    entities.set(`r${runId}`, { typename: 'TeamRun', id: runId });
    for (const id of teamIds(run.owner, run.teamName)) {
      const teamId = encodeGlobalID('Team', id);
      entities.set(`t${teamId}`, { typename: 'Team', id: teamId });
    }
  }
  return [...entities.values()];
}

/** Texts of operations and the fragments they spread, per operation node (yoga's parse cache reuses documents). */
const operationTexts = new WeakMap<OperationDefinitionNode, string>();

function operationText(document: DocumentNode, operation: OperationDefinitionNode): string {
  const known = operationTexts.get(operation);
  if (known !== undefined) return known;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      fragments.set(definition.name.value, definition);
    }
  }
  const used = new Map<string, FragmentDefinitionNode>();
  const spreads = (node: OperationDefinitionNode | FragmentDefinitionNode) =>
    visit(node, {
      FragmentSpread(spread) {
        const fragment = fragments.get(spread.name.value);
        if (fragment && !used.has(fragment.name.value)) {
          used.set(fragment.name.value, fragment);
          spreads(fragment);
        }
      },
    });
  spreads(operation);
  const text = [
    operation,
    ...[...used.values()].sort((a, b) => (a.name.value < b.name.value ? -1 : 1)),
  ]
    .map((definition) => print(definition))
    .join('\n');
  operationTexts.set(operation, text);
  return text;
}

/**
 * What an execution's answer depends on besides the viewer: the operation that runs (printed,
 * with the fragments it spreads, whatever else the document holds or how it is spaced) and
 * the values of the variables it declares, coerced as the executor will (defaults filled in;
 * a variable it does not declare changes nothing). Variables have been bounded in nesting
 * and checked before this runs (hardening/input-values.ts).
 */
function usedOperation(args: ExecutionArgs): string {
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation) return print(args.document);
  const text = operationText(args.document, operation);
  const coerced = getVariableValues(
    args.schema,
    operation.variableDefinitions ?? [],
    (args.variableValues ?? {}) as Record<string, unknown>,
  );
  // Variables that do not coerce fail the execution, whose answer is never kept.
  return `${text}\u0000${JSON.stringify(coerced.coerced ?? coerced.errors?.length ?? 0)}`;
}

/** The guarded cache: look-ups, stores and evictions that never fail, and the evictions under way. */
interface GuardedCache extends Cache {
  /** Resolves once every eviction started so far has ended (or failed). */
  evicted(): Promise<void>;
}

/**
 * The cache as the plugin needs it, which neither awaits nor catches what `set` and
 * `invalidate` return (a rejected eviction would end the process) and turns a failed `get`
 * into an INTERNAL answer: every failure is logged and counted, a failed look-up is a miss.
 * Evictions are of entities with an id only: a mutation's result also names the types of its
 * objects without one (RunTeamSubmission), and evicting a whole type would drop every answer;
 * what the poller and mutations change is always an object with an id.
 */
function guarded(cache: Cache, metrics: Metrics, logger: Logger): GuardedCache {
  const failed = (operation: 'get' | 'set' | 'invalidate') => (error: unknown) => {
    metrics.responseCacheErrors.inc({ operation });
    logger.warn({ err: error, operation }, 'response cache operation failed');
  };
  const pending = new Set<Promise<void>>();
  return {
    async get(key) {
      try {
        const found = await cache.get(key);
        metrics.responseCache.inc({ result: found ? 'hit' : 'miss' });
        return found;
      } catch (error) {
        failed('get')(error);
        metrics.responseCache.inc({ result: 'unavailable' });
        return undefined;
      }
    },
    set(key, result, entities, ttl) {
      // Started at once rather than a turn of microtasks later: the store's command is sent
      // before the answer is written, not held behind it.
      let stored: Promise<void> | void;
      try {
        stored = cache.set(key, result, entities, ttl);
      } catch (error) {
        stored = Promise.reject(error);
      }
      return Promise.resolve(stored).catch(failed('set'));
    },
    invalidate(entities) {
      const withId = [...entities].filter((entity: CacheEntityRecord) => entity.id != null);
      if (withId.length === 0) return;
      const done = Promise.resolve()
        .then(() => cache.invalidate(withId))
        .catch(failed('invalidate'))
        .finally(() => pending.delete(done));
      pending.add(done);
      return done;
    },
    async evicted() {
      await Promise.all(pending);
    },
  };
}

/**
 * A mutation's answer waits for the evictions it caused (the plugin starts them when the
 * mutation is done but does not wait): a client that reads after its mutation's answer never
 * gets the answer from before it. A stalled Redis holds it at most its command timeout.
 */
function evictionsBeforeAnswers(cache: GuardedCache): Plugin {
  return {
    onExecute({ args }) {
      if (getOperationAST(args.document, args.operationName)?.operation !== 'mutation') return;
      return { onExecuteDone: () => cache.evicted() };
    },
  };
}
