import { createRedisCache } from '@envelop/response-cache-redis';
import {
  type Cache,
  createInMemoryCache,
  useResponseCache,
} from '@graphql-yoga/plugin-response-cache';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { type GraphQLSchema, isObjectType } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { CycleMessage, LiveHub } from '../live/hub.js';
import { asksLive } from '../live-queries/index.js';
import type { Metrics } from '../metrics.js';
import { type Viewer, visibilityScope } from '../model/viewer.js';

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

export interface ResponseCacheOptions {
  readonly config: Config;
  readonly schema: GraphQLSchema;
  readonly viewers: WeakMap<Request, Viewer>;
  readonly live: LiveHub;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

export interface ResponseCache {
  readonly plugin: Plugin;
  /** Stops following the poller and disconnects from Redis. */
  close(): Promise<void>;
}

/**
 * Query results through @graphql-yoga/plugin-response-cache, keyed by the viewer's scope,
 * in Redis when REDIS_URL is set (shared by every instance) or in memory. The poller's cycle
 * messages evict the results that contain a run that changed and its team (the plugin's
 * entity invalidation by __typename and id), on every instance, through the channel the
 * subscriptions use.
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
        // A stalled Redis fails the look-up (the query then runs) instead of holding it.
        commandTimeout: 1_000,
        maxRetriesPerRequest: 1,
      })
    : undefined;
  redis?.on('error', (error: Error) =>
    logger.warn({ err: error }, 'Redis connection error (response cache)'),
  );
  const cache = counted(
    byIdOnly(redis ? createRedisCache({ redis }) : createInMemoryCache()),
    metrics,
  );
  const ttlPerSchemaCoordinate: Record<string, number> = {};
  for (const type of Object.values(options.schema.getTypeMap())) {
    if (isObjectType(type) && !type.name.startsWith('__') && !CATALOG_TYPES.has(type.name)) {
      ttlPerSchemaCoordinate[type.name] = historyTtl;
    }
  }
  const stopObserving = options.live.observeCycles((message) => {
    const entities = changedEntities(message);
    if (entities.length === 0) return;
    Promise.resolve(cache.invalidate(entities)).catch((error: unknown) =>
      logger.warn({ err: error }, 'response cache invalidation failed'),
    );
  });
  const plugin = useResponseCache<Record<string, unknown>>({
    cache,
    ttl,
    ttlPerSchemaCoordinate,
    session: (request) => {
      const viewer = options.viewers.get(request);
      return viewer ? visibilityScope(viewer) : null;
    },
    // The plugin can answer before execution (a hit in onParams, a 304 in onRequest), which
    // would pass the rate limit and the request log by (hardening/rate-limit.ts and
    // request-log.ts count in execute). Enabled only once yoga has built our context, so
    // every look-up happens in execute, after the budgets, on every transport alike.
    // Nor for a live query, whose answers are a stream kept true (src/live-queries/).
    enabled: (_request, context) => 'viewer' in context && !asksLive(context),
    // Mutations are never cached, and evict the objects they return (the run an answer
    // resumed); `byIdOnly` keeps that from evicting whole types.
    invalidateViaMutation: true,
    includeExtensionMetadata: false,
  });
  return {
    plugin,
    async close() {
      stopObserving();
      redis?.disconnect();
    },
  };
}

/** The cache entities a cycle's transitions make stale: each run, and its team's stats and lists. */
function changedEntities(message: CycleMessage): { typename: string; id: string }[] {
  const entities = new Map<string, { typename: string; id: string }>();
  for (const { run } of message.transitions) {
    const runId = encodeGlobalID('TeamRun', run.execId);
    const teamId = encodeGlobalID('Team', run.teamName);
    entities.set(`r${runId}`, { typename: 'TeamRun', id: runId });
    entities.set(`t${teamId}`, { typename: 'Team', id: teamId });
  }
  return [...entities.values()];
}

/**
 * Invalidation of the entities that have an id only. A mutation's result also names the
 * types of its objects without one (RunTeamSubmission), and the Redis cache evicts a whole
 * type with KEYS over the whole (shared) Redis; what the poller and mutations change is
 * always an object with an id.
 */
function byIdOnly(cache: Cache): Cache {
  return {
    get: (key) => cache.get(key),
    set: (...args) => cache.set(...args),
    invalidate: (entities) => cache.invalidate([...entities].filter((entity) => entity.id != null)),
  };
}

/** The cache, counting look-ups as agentgraph_response_cache_total{result}. */
function counted(cache: Cache, metrics: Metrics): Cache {
  return {
    set: (...args) => cache.set(...args),
    invalidate: (entities) => cache.invalidate(entities),
    get: async (key) => {
      const found = await cache.get(key);
      metrics.responseCache.inc({ result: found ? 'hit' : 'miss' });
      return found;
    },
  };
}
