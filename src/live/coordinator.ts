import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  type CycleMessage,
  type InvalidationMessage,
  type LiveMessage,
  parseSnapshot,
  type Snapshot,
} from './snapshot.js';

type OnMessage = (message: LiveMessage) => void;

/** `acquired`: the lock was free and is now ours; `renewed`: it was ours; `elsewhere`: another poller has it. */
export type Claim = 'acquired' | 'renewed' | 'elsewhere';

/**
 * Who polls, where the last good snapshot is kept and how cycle messages reach every
 * subscriber. In memory for one process; through Redis for several, where only the holder
 * of a lock with expiry polls and its snapshot lets the next holder carry on from it.
 */
export interface Coordinator {
  /**
   * Hands every cycle message published from now on to `onMessage`, until the returned
   * function is called. The poller knows no GraphQL library, so this is its own small bus
   * rather than yoga's pubsub.
   */
  listen(onMessage: OnMessage): () => void;
  claim(token: string): Promise<Claim>;
  /** The last good snapshot, for a poller that has just acquired the lock and for late joiners. */
  loadSnapshot(): Promise<Snapshot | null>;
  /**
   * Stores the snapshot and publishes the message, both only if `token` still holds the lock
   * (a poller that lost it mid-cycle must not publish), or if the lock lapsed while the cycle
   * ran and nobody took it since: the stored snapshot is still `base`, the one the cycle
   * started from. Resolves to whether it did.
   */
  commit(
    token: string,
    base: Snapshot | null,
    snapshot: Snapshot,
    message: CycleMessage | null,
  ): Promise<boolean>;
  release(token: string): Promise<void>;
  /**
   * Hands an action's invalidation to every listener of every instance (the lock plays no
   * part: any instance may run a mutation).
   */
  publish(message: InvalidationMessage): Promise<void>;
  /**
   * Resolves once every message published from now on reaches this process's listeners; the
   * poller waits for it before each commit, so that it never publishes past them.
   */
  listening(): Promise<void>;
  close(): Promise<void>;
}

const TOPIC = 'live:cycles';

export class MemoryCoordinator implements Coordinator {
  private readonly listeners = new Set<OnMessage>();
  private holder: string | null = null;
  private snapshot: Snapshot | null = null;

  async claim(token: string): Promise<Claim> {
    if (this.holder === token) return 'renewed';
    if (this.holder !== null) return 'elsewhere';
    this.holder = token;
    return 'acquired';
  }

  listen(onMessage: OnMessage): () => void {
    this.listeners.add(onMessage);
    return () => this.listeners.delete(onMessage);
  }

  async loadSnapshot(): Promise<Snapshot | null> {
    return this.snapshot;
  }

  async commit(
    token: string,
    _base: Snapshot | null,
    snapshot: Snapshot,
    message: CycleMessage | null,
  ): Promise<boolean> {
    // An instance's own lock does not lapse.
    if (this.holder !== token) return false;
    this.snapshot = snapshot;
    if (message) for (const listener of [...this.listeners]) listener(message);
    return true;
  }

  async publish(message: InvalidationMessage): Promise<void> {
    for (const listener of [...this.listeners]) listener(message);
  }

  async release(token: string): Promise<void> {
    if (this.holder !== token) return;
    this.holder = null;
    // With nobody left to poll for, the next subscriber starts from a fresh baseline.
    this.snapshot = null;
  }

  async listening(): Promise<void> {}

  async close(): Promise<void> {}
}

// Acquire the lock, or renew it (and the snapshot's expiry) if it is ours already.
const CLAIM = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return 1
end
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 2
end
return 0`;

// A cycle that outlived its lock (a loaded machine, or Redis paused while its commit waited)
// takes the lock again if nobody took it since and the stored snapshot is still the one the
// cycle started from (its epoch and sequence, ARGV[5]); a poller that took over would have
// stored another. Refused, the poller stood by with its lock free and polled again from scratch.
const COMMIT = `
local holder = redis.call('GET', KEYS[1])
if holder ~= ARGV[1] then
  if holder then return 0 end
  local stored = redis.call('GET', KEYS[2])
  local base = ''
  if stored then
    local decoded = cjson.decode(stored)
    base = decoded['epoch'] .. ':' .. decoded['seq']
  end
  if base ~= ARGV[5] then return 0 end
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[6])
end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
if ARGV[4] ~= '' then redis.call('PUBLISH', KEYS[3], ARGV[4]) end
return 1`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`;

export interface RedisCoordinatorOptions {
  readonly url: string;
  /** AUTH credentials (REDIS_USERNAME/REDIS_PASSWORD). */
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  /** Prefix of every key and channel, so that deployments (and test runs) can share a Redis. */
  readonly prefix: string;
  readonly intervalMs: number;
  /** REDIS_COMMAND_TIMEOUT_MS; a claim is given at least an interval, when its next tick is due. */
  readonly commandTimeoutMs: number;
  readonly logger: Logger;
}

/**
 * The lock lives 1.5 intervals: the holder renews it every interval, and waiting instances
 * try every quarter interval (see Poller), so a dead holder is replaced within 1.75
 * intervals. The snapshot outlives the lock long enough for that hand-over, and no longer,
 * so that a poller starting after a quiet spell begins from a fresh baseline instead of
 * replaying old changes.
 */
export class RedisCoordinator implements Coordinator {
  private readonly topic: string;
  private readonly listeners = new Set<OnMessage>();
  /** The SUBSCRIBE of the current listeners, which `listening()` waits for. */
  private subscribed: Promise<unknown> = Promise.resolve();
  /** Settles `subscribed` once the subscriber, disconnected, is subscribed again. */
  private resubscribed: ((subscribe: unknown) => void) | undefined;
  private readonly commands: Redis;
  private readonly subscriber: Redis;
  private readonly lockKey: string;
  private readonly snapshotKey: string;
  private readonly lockTtlMs: number;
  private readonly snapshotTtlMs: number;
  private readonly listenTimeoutMs: number;
  private readonly logger: Logger;

  constructor(options: RedisCoordinatorOptions) {
    this.logger = options.logger;
    // A stalled Redis must not stall the poll loop: commands fail and the next tick retries.
    const auth = { username: options.username, password: options.password };
    const commandTimeout = Math.max(options.commandTimeoutMs, options.intervalMs);
    this.commands = new Redis(options.url, {
      ...auth,
      commandTimeout,
      maxRetriesPerRequest: 1,
    });
    // The subscriber's commands wait for Redis to come back rather than fail. No ready check:
    // its INFO, sent after a SUBSCRIBE issued while connecting, is refused in subscriber mode
    // and the subscription is lost (ioredis 5.8.2+, redis/ioredis#2037).
    this.subscriber = new Redis(options.url, {
      ...auth,
      maxRetriesPerRequest: null,
      enableReadyCheck: false,
    });
    this.listenTimeoutMs = commandTimeout;
    for (const client of [this.commands, this.subscriber]) {
      client.on('error', (error: Error) =>
        options.logger.warn({ err: error }, 'Redis connection error'),
      );
    }
    this.topic = `${options.prefix}${TOPIC}`;
    this.lockKey = `${options.prefix}live:lock`;
    this.snapshotKey = `${options.prefix}live:snapshot`;
    this.lockTtlMs = Math.round(options.intervalMs * 1.5);
    this.snapshotTtlMs = options.intervalMs * 4;
    // A reconnected subscriber is subscribed again (ioredis's autoResubscribe) only some time
    // after the command connection is back: until that SUBSCRIBE is confirmed, listening()
    // waits, and the poller publishes nothing this process would miss.
    this.subscriber.on('close', () => {
      if (this.listeners.size === 0 || this.resubscribed) return;
      this.subscribed = new Promise((resolve) => {
        this.resubscribed = resolve;
      });
    });
    this.subscriber.on('ready', () => {
      const resolve = this.resubscribed;
      this.resubscribed = undefined;
      if (this.listeners.size === 0) return resolve?.(undefined);
      const again = this.subscriber.subscribe(this.topic);
      again.catch(() => undefined);
      this.subscribed = again;
      resolve?.(again);
    });
    this.subscriber.on('message', (channel: string, text: string) => {
      if (channel !== this.topic) return;
      const message = JSON.parse(text) as LiveMessage;
      for (const listener of [...this.listeners]) listener(message);
    });
  }

  listen(onMessage: OnMessage): () => void {
    if (this.listeners.size === 0) {
      this.subscribed = this.subscriber.subscribe(this.topic);
      // While Redis is unreachable it waits in the queue until close() rejects it ("Connection
      // is closed"); only listening() cares, and it has a time-out of its own.
      this.subscribed.catch(() => undefined);
    }
    this.listeners.add(onMessage);
    return () => {
      if (!this.listeners.delete(onMessage) || this.listeners.size > 0) return;
      this.subscriber.unsubscribe(this.topic).catch(() => undefined);
    };
  }

  async claim(token: string): Promise<Claim> {
    const result = await this.commands.eval(
      CLAIM,
      2,
      this.lockKey,
      this.snapshotKey,
      token,
      this.lockTtlMs,
      this.snapshotTtlMs,
    );
    return result === 1 ? 'renewed' : result === 2 ? 'acquired' : 'elsewhere';
  }

  /**
   * An unusable snapshot is deleted and the poller starts a new baseline (subscribers miss
   * at most the changes of one interval); kept, it would fail every cycle while the lock
   * renewal kept it alive.
   */
  async loadSnapshot(): Promise<Snapshot | null> {
    const text = await this.commands.get(this.snapshotKey);
    if (!text) return null;
    try {
      return parseSnapshot(text);
    } catch (error) {
      this.logger.warn(
        { key: this.snapshotKey, reason: error instanceof Error ? error.message : String(error) },
        'live snapshot in Redis is unusable; deleted, polling starts from a new baseline',
      );
      await this.commands.del(this.snapshotKey);
      return null;
    }
  }

  async commit(
    token: string,
    base: Snapshot | null,
    snapshot: Snapshot,
    message: CycleMessage | null,
  ): Promise<boolean> {
    const result = await this.commands.eval(
      COMMIT,
      3,
      this.lockKey,
      this.snapshotKey,
      this.topic,
      token,
      JSON.stringify(snapshot),
      this.snapshotTtlMs,
      message ? JSON.stringify(message) : '',
      base ? `${base.epoch}:${base.seq}` : '',
      this.lockTtlMs,
    );
    return result === 1;
  }

  async publish(message: InvalidationMessage): Promise<void> {
    await this.commands.publish(this.topic, JSON.stringify(message));
  }

  async release(token: string): Promise<void> {
    await this.commands.eval(RELEASE, 1, this.lockKey, token);
  }

  async listening(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error('Redis did not confirm the subscription in time')),
        this.listenTimeoutMs,
      );
    });
    try {
      await Promise.race([this.subscribed, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    // Not QUIT: with Redis unreachable it would wait for a reconnection that may never come.
    this.commands.disconnect();
    this.subscriber.disconnect();
  }
}
