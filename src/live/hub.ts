import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Metrics } from '../metrics.js';
import type { TeamRun, TeamRunState } from '../model/team.js';
import { ownerAdmits } from '../model/viewer.js';
import { Channel } from './channel.js';
import { type Coordinator, MemoryCoordinator, RedisCoordinator } from './coordinator.js';
import { type LiveSource, Poller } from './poller.js';
import {
  type CycleMessage,
  fromWire,
  isInvalidation,
  type LiveMessage,
  type Transition,
  type WireRun,
  waitingKey,
  waitingOf,
} from './snapshot.js';

export type { CycleMessage } from './snapshot.js';
/** live/'s public entry is this file: the rest of src/ reaches the channels through it. */
export { Channel };

export interface TeamRunChangeFilter {
  readonly teamName?: string | null;
  /** New states to report; all when empty or absent. */
  readonly states?: readonly TeamRunState[] | null;
  /** Only runs this owner may see (`visibleOwner` of the viewer); every owner's when absent. */
  readonly owner?: string | null;
}

export interface TeamRunChange {
  readonly run: TeamRun;
  readonly previousState: TeamRunState | null;
  readonly state: TeamRunState;
  /** When the poll cycle that saw the change started. */
  readonly observedAt: Date;
}

export interface WaitingRun {
  readonly execId: string;
  readonly teamName: string;
  readonly startDate: Date | null;
  readonly waitingSince: Date | null;
  readonly run: TeamRun;
}

export interface LiveHubOptions {
  readonly coordinator: Coordinator;
  readonly source: LiveSource;
  readonly intervalMs: number;
  readonly overlapMs: number;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

interface Listener {
  /** Adds to `written` what a channel's bypass returned, to time the fan-out to its end. */
  deliver(message: CycleMessage, written: Set<PromiseLike<unknown>>): void;
  /** The waiting set read from the stored snapshot when this process joined late. */
  restore(waiting: readonly WireRun[]): void;
  /** An action's invalidation keys (observeCycles' second callback). */
  invalidate?(keys: readonly string[]): void;
  end(): void;
}

/** The latest waiting set this process knows, to answer a new subscriber at once. */
interface Mirror {
  readonly epoch: string;
  readonly seq: number;
  readonly waiting: readonly WireRun[];
}

interface WaitingView {
  /** Identifies the set, so that a subscription skips a message that leaves it unchanged. */
  readonly key: string;
  readonly runs: WaitingRun[];
}

interface Session {
  readonly poller: Poller;
  mirror: Mirror | null;
  stop(): Promise<void>;
}

/**
 * Subscriptions of this process. The first one starts a session (the poller and one
 * listener on the coordinator's messages); the last one to end stops it. Each cycle message is
 * received once per process and fanned out to the subscriptions, which filter in memory.
 */
export class LiveHub {
  private readonly listeners = new Set<Listener>();
  /** Listeners of observeCycles, which agentgraph_active_subscriptions does not count. */
  private readonly observers = new WeakSet<Listener>();
  private readonly changes = new WeakMap<Transition, TeamRunChange>();
  private readonly waitingViews = new WeakMap<readonly WireRun[], Map<string, WaitingView>>();
  private session: Session | null = null;
  private stopping: Promise<void> = Promise.resolve();
  /** The fan-out in progress: the next message waits for it, so each socket gets them in order. */
  private fanOut: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: LiveHubOptions) {}

  /** True while this process holds the poll lock (always, with subscribers, without Redis). */
  get polling(): boolean {
    return this.session?.poller.polling ?? false;
  }

  /** True while a session (poller and message listener) runs. */
  get active(): boolean {
    return this.session !== null;
  }

  /** One event per observed transition or new run, whose team and new state match. */
  teamRunChanges(filter: TeamRunChangeFilter): AsyncIterableIterator<TeamRunChange> {
    const states = filter.states?.length ? new Set(filter.states) : null;
    const matches = (t: Transition) =>
      (!filter.teamName || t.run.teamName === filter.teamName) &&
      ownerAdmits(filter.owner, t.run.owner) &&
      (!states || states.has(t.run.state));
    const channel = this.channel<TeamRunChange>({
      deliver: (message, written) => {
        for (const transition of message.transitions) {
          if (!matches(transition)) continue;
          const write = channel.push(this.changeOf(transition, message.polledAt));
          if (write) written.add(write);
        }
      },
      restore: () => {},
    });
    return channel;
  }

  /** The current waiting set (of one team, or all), then the whole set whenever it changes. */
  waitingForHuman(
    teamName: string | null,
    owner: string | null = null,
  ): AsyncIterableIterator<WaitingRun[]> {
    let last: string | null = null;
    const emit = (waiting: readonly WireRun[]) => {
      const view = this.waitingView(waiting, teamName, owner);
      if (view.key === last) return undefined;
      last = view.key;
      return channel.replace(view.runs);
    };
    const channel = this.channel<WaitingRun[]>({
      deliver: (message, written) => {
        const write = emit(message.waiting);
        if (write) written.add(write);
      },
      restore: emit,
    });
    const mirror = this.session?.mirror;
    if (mirror) emit(mirror.waiting);
    return channel;
  }

  /**
   * Every cycle message from now on, for what follows the runs without being a subscription
   * (the response cache's invalidation, src/production/response-cache.ts; the live queries,
   * src/live-queries/), and, to `onInvalidation`, the keys every instance's actions publish
   * with `invalidate`. It keeps the poller running, with or without subscribers, until the
   * returned function is called.
   */
  observeCycles(
    onCycle: (message: CycleMessage) => void,
    onInvalidation?: (keys: readonly string[]) => void,
  ): () => void {
    if (this.closed) return () => {};
    const listener: Listener = {
      deliver: (message) => onCycle(message),
      restore: () => {},
      ...(onInvalidation ? { invalidate: onInvalidation } : {}),
      end: () => this.remove(listener),
    };
    this.observers.add(listener);
    this.listeners.add(listener);
    this.session ??= this.startSession();
    return listener.end;
  }

  /**
   * Hands what an action changed to the observers of every instance (through Redis with
   * REDIS_URL, on the channel of the cycle messages). Never fails the action: a lost
   * invalidation is made good by the next poll cycle that sees the change.
   */
  async invalidate(keys: readonly string[]): Promise<void> {
    if (keys.length === 0 || this.closed) return;
    try {
      await this.options.coordinator.publish({ kind: 'invalidate', keys });
    } catch (error) {
      this.options.logger.warn({ err: error }, 'could not publish an invalidation');
    }
  }

  /** One event object per transition, shared (read-only) by every subscription it matches. */
  private changeOf(transition: Transition, polledAt: string): TeamRunChange {
    let change = this.changes.get(transition);
    if (!change) {
      change = {
        run: fromWire(transition.run),
        previousState: transition.previousState,
        state: transition.run.state,
        observedAt: new Date(polledAt),
      };
      this.changes.set(transition, change);
    }
    return change;
  }

  /**
   * One waiting set's part for a team and owner, worked out once for all the subscriptions
   * that ask for it: with thousands of subscribers, filtering, sorting and converting the
   * set for each of them was most of the time to deliver a change. Shared, so read-only.
   */
  private waitingView(
    waiting: readonly WireRun[],
    teamName: string | null,
    owner: string | null,
  ): WaitingView {
    let views = this.waitingViews.get(waiting);
    if (!views) {
      views = new Map();
      this.waitingViews.set(waiting, views);
    }
    const filter = `${teamName ?? ''}\u0000${owner ?? ''}`;
    let view = views.get(filter);
    if (!view) {
      const mine = waiting.filter(
        (run) => (!teamName || run.teamName === teamName) && ownerAdmits(owner, run.owner),
      );
      view = { key: waitingKey(mine), runs: [...mine].sort(byWaitingSince).map(toWaitingRun) };
      views.set(filter, view);
    }
    return view;
  }

  /** Ends every subscription, stops the poller and disconnects from the coordinator. */
  async stop(): Promise<void> {
    this.closed = true;
    for (const listener of [...this.listeners]) listener.end();
    await this.stopping;
    await this.options.coordinator.close();
  }

  private channel<T>(handlers: Omit<Listener, 'end'>): Channel<T> {
    const listener: Listener = { ...handlers, end: () => channel.close() };
    const channel = new Channel<T>(() => this.remove(listener));
    if (this.closed) {
      channel.close();
      return channel;
    }
    this.listeners.add(listener);
    this.options.metrics.activeSubscriptions.inc();
    this.session ??= this.startSession();
    return channel;
  }

  private remove(listener: Listener): void {
    if (!this.listeners.delete(listener)) return;
    if (!this.observers.has(listener)) this.options.metrics.activeSubscriptions.dec();
    if (this.listeners.size > 0 || !this.session) return;
    const session = this.session;
    this.session = null;
    this.stopping = this.stopping.then(() => session.stop());
  }

  private startSession(): Session {
    const { coordinator, logger } = this.options;
    const poller = new Poller(this.options);
    const session: Session = { poller, mirror: null, stop: async () => {} };
    // Listening starts now, before any await, so that no message published after a
    // subscriber read the mirror can pass it by.
    const unlisten = coordinator.listen((message) => this.receive(session, message));
    const started = this.stopping.then(async () => {
      try {
        await coordinator.listening();
        const stored = await coordinator.loadSnapshot();
        if (stored && !session.mirror && this.session === session) {
          const waiting = waitingOf(stored.runs);
          session.mirror = { epoch: stored.epoch, seq: stored.seq, waiting };
          for (const listener of [...this.listeners]) listener.restore(waiting);
        }
      } catch (error) {
        logger.error({ err: error }, 'live coordinator unavailable; the poller keeps trying');
      }
      if (this.session === session) poller.start();
    });
    session.stop = async () => {
      await started;
      unlisten();
      await poller.stop();
    };
    return session;
  }

  private receive(session: Session, message: LiveMessage): void {
    if (session !== this.session) return;
    if (isInvalidation(message)) {
      for (const listener of [...this.listeners]) listener.invalidate?.(message.keys);
      return;
    }
    const mirror = session.mirror;
    if (mirror && mirror.epoch === message.epoch && message.seq <= mirror.seq) return;
    session.mirror = { epoch: message.epoch, seq: message.seq, waiting: message.waiting };
    const listeners = [...this.listeners];
    this.fanOut = this.fanOut.then(() => this.deliver(listeners, message));
  }

  /**
   * Hands a message to the subscriptions in batches, yielding to the event loop between them
   * so that HTTP requests (/health) and the next poll are served while thousands of sockets
   * get theirs; each batch's executions and sends run in the microtasks before the next one.
   * A single batch (a few subscribers) is delivered at once, as before. The fan-out is timed
   * to the end of the writes that channels' bypasses took; the next message does not wait for
   * them (a slow execution holds back only the subscriptions it serves).
   */
  private async deliver(listeners: readonly Listener[], message: CycleMessage): Promise<void> {
    const started = performance.now();
    const written = new Set<PromiseLike<unknown>>();
    for (let i = 0; i < listeners.length; i++) {
      if (i > 0 && i % FAN_OUT_BATCH === 0) await nextTurn();
      const listener = listeners[i] as Listener;
      if (this.listeners.has(listener)) listener.deliver(message, written);
    }
    // setImmediate: after the sends that the last batch's microtasks make.
    Promise.allSettled(written).then(() =>
      setImmediate(() =>
        this.options.metrics.liveFanOutDuration.observe((performance.now() - started) / 1000),
      ),
    );
  }
}

/** Subscriptions served per turn of the event loop during a fan-out. */
export const FAN_OUT_BATCH = 500;

/** Resolves after the I/O callbacks that are due, so that a long fan-out lets them run. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Longest-waiting first; a run whose start of waiting is unknown waited since before polling began. */
function byWaitingSince(a: WireRun, b: WireRun): number {
  const since = (run: WireRun) => run.waitingSince ?? '';
  return since(a).localeCompare(since(b)) || a.execId.localeCompare(b.execId);
}

function toWaitingRun(wire: WireRun): WaitingRun {
  const run = fromWire(wire);
  return {
    execId: run.execId,
    teamName: run.teamName,
    startDate: run.startDate,
    waitingSince: wire.waitingSince === null ? null : new Date(wire.waitingSince),
    run,
  };
}

export interface LiveHubFactoryOptions {
  readonly config: Config['live'];
  readonly source: LiveSource;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

/** In memory for one process; through Redis (messages, lock and snapshot) when REDIS_URL is set. */
export function createLiveHub(options: LiveHubFactoryOptions): LiveHub {
  const { config, logger } = options;
  const coordinator = config.redisUrl
    ? new RedisCoordinator({
        url: config.redisUrl,
        username: config.redisUsername,
        password: config.redisPassword,
        prefix: config.redisPrefix,
        intervalMs: config.pollIntervalMs,
        commandTimeoutMs: config.redisCommandTimeoutMs,
        logger,
      })
    : new MemoryCoordinator();
  return new LiveHub({
    coordinator,
    source: options.source,
    intervalMs: config.pollIntervalMs,
    overlapMs: config.overlapMs,
    metrics: options.metrics,
    logger,
  });
}
