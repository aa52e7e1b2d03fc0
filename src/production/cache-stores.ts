import type { Cache, CacheEntityRecord } from '@envelop/response-cache';
import type { ExecutionResult } from 'graphql';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';

/** Where the response cache keeps answers (src/production/response-cache.ts). */
export interface CacheStore {
  readonly cache: Cache;
  close(): void;
}

/** How the stores name an entity's index: the answers that hold TeamRun `id` are under `TeamRun:id`. */
const entityKey = ({ typename, id }: CacheEntityRecord): string => `${typename}:${id}`;

/** Entities with an id: what an eviction names (see `guarded` in response-cache.ts). */
const entityKeys = (entities: Iterable<CacheEntityRecord>): string[] =>
  [...entities].filter((entity) => entity.id != null).map(entityKey);

interface MemoryEntry {
  /** The answer as JSON: its size is known exactly, and every hit gets a fresh copy of it. */
  readonly json: string;
  readonly entities: readonly string[];
  readonly bytes: number;
}

/**
 * Answers in this process, at most `maxBytes` of them (their JSON, keys and index entries),
 * least recently used evicted first, each removed when its TTL ends rather than when evicted.
 * @envelop/response-cache's in-memory cache bounds the number of answers only (1,000 of any
 * size) and keeps expired ones until they are evicted; lru-cache bounds the size itself.
 */
export function memoryCache(maxBytes: number, onSize: (bytes: number) => void): CacheStore {
  const byEntity = new Map<string, Set<string>>();
  const answers: LRUCache<string, MemoryEntry> = new LRUCache<string, MemoryEntry>({
    maxSize: maxBytes,
    sizeCalculation: (entry) => entry.bytes,
    ttlAutopurge: true,
    // After the entry is gone (evicted, expired, replaced or deleted): its index entries go.
    disposeAfter: (entry, key) => {
      for (const entity of entry.entities) {
        const keys = byEntity.get(entity);
        keys?.delete(key);
        if (keys?.size === 0) byEntity.delete(entity);
      }
      onSize(answers.calculatedSize);
    },
  });
  const cache: Cache = {
    get(key) {
      const entry = answers.get(key);
      return entry ? (JSON.parse(entry.json) as ExecutionResult) : undefined;
    },
    set(key, result, collected, ttl) {
      const json = JSON.stringify(result);
      const entities = [...new Set(entityKeys(collected))];
      const bytes =
        Buffer.byteLength(json) +
        key.length +
        entities.reduce((sum, entity) => sum + entity.length + key.length, 0);
      // An answer larger than the whole cache is not kept (lru-cache refuses it).
      answers.set(key, { json, entities, bytes }, { ttl });
      if (answers.has(key)) {
        for (const entity of entities) {
          const keys = byEntity.get(entity) ?? new Set<string>();
          keys.add(key);
          byEntity.set(entity, keys);
        }
      }
      onSize(answers.calculatedSize);
    },
    invalidate(entities) {
      for (const entity of entityKeys(entities)) {
        for (const key of [...(byEntity.get(entity) ?? [])]) answers.delete(key);
      }
    },
  };
  return { cache, close: () => answers.clear() };
}

/** The first error of a pipeline's replies, thrown; else the replies. */
function replies(results: [Error | null, unknown][] | null): unknown[] {
  for (const [error] of results ?? []) if (error) throw error;
  return (results ?? []).map(([, reply]) => reply);
}

/**
 * Answers in Redis (keys under the connection's prefix), shared by every instance: the answer
 * under its key with its TTL, and a set per entity of the answers that hold it, which expires
 * `maxTtlMs` after the last answer added to it, so it outlives every answer it names and no
 * index stays behind. @envelop/response-cache-redis keeps its entity and per-operation sets
 * forever (and a per-type set that only type-wide evictions read, which this cache never
 * does), so the store is written here.
 */
export function redisCache(redis: Redis, maxTtlMs: number): CacheStore {
  const cache: Cache = {
    async get(key) {
      const json = await redis.get(key);
      return json ? (JSON.parse(json) as ExecutionResult) : undefined;
    },
    async set(key, result, collected, ttl) {
      const pipeline = redis.pipeline().set(key, JSON.stringify(result), 'PX', ttl);
      for (const entity of new Set(entityKeys(collected))) {
        pipeline.sadd(entity, key).pexpire(entity, maxTtlMs);
      }
      replies(await pipeline.exec());
    },
    async invalidate(entities) {
      const keys = entityKeys(entities);
      if (keys.length === 0) return;
      const members = replies(
        await redis.pipeline(keys.map((entity) => ['smembers', entity])).exec(),
      ) as string[][];
      await redis.del(...keys, ...members.flat());
    },
  };
  return { cache, close: () => {} };
}
