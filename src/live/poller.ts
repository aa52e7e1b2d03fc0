import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics.js';
import type { PolledRun, TeamRun } from '../model/team.js';
import type { Coordinator } from './coordinator.js';
import { advance, diff, type Snapshot, vanishedTransitions } from './snapshot.js';

/** What the poller reads: the repository's live statement, and runs by id for the rare vanished run. */
export interface LiveSource {
  livePoll(since: Date): Promise<PolledRun[]>;
  runsByIds(ids: readonly string[]): Promise<(TeamRun | null)[]>;
}

export interface PollerOptions {
  readonly source: LiveSource;
  readonly coordinator: Coordinator;
  readonly intervalMs: number;
  /** How far before the last good cycle `since` reaches: clock skew and commit latency. */
  readonly overlapMs: number;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

const MAX_BACKOFF_MS = 30_000;

/**
 * One per process. A tick every interval claims (or renews) the poll lock; while this
 * process holds it, the tick starts a cycle unless one is still running or a failed cycle's
 * back-off has not elapsed. Lock renewal therefore never waits on a slow database.
 *
 * A cycle reads runs that have not ended plus those that ended since the last *good*
 * cycle (minus the overlap), diffs them against the last good snapshot and publishes the
 * transitions. A failed cycle changes nothing, so the first good one after an outage sees
 * every run that ended during it, however long it lasted.
 *
 * The same holds for an outage of the coordinator (Redis): the last good snapshot is kept
 * while the lock cannot be claimed, and compared with the one Redis still has (if any) when
 * the lock is back, the newer winning; by then Redis's copy has usually expired or gone
 * with a restart. Only another instance taking the lock makes this one forget its snapshot:
 * that instance carries on from its own. And the claims of one outage all use one token, so
 * a claim that Redis runs late (queued while it was paused) holds the lock for this
 * instance rather than locking it out until the lock expires.
 */
export class Poller {
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private tickInFlight: Promise<void> | undefined;
  private cycleInFlight: Promise<void> | undefined;
  /** A new token per acquisition, so a cycle begun under an earlier hold cannot commit. */
  private token: string | undefined;
  /** The token to claim with while not holding the lock: the same until a claim answers. */
  private claimToken: string | undefined;
  private snapshot: Snapshot | null = null;
  private failures = 0;
  private retryAt = 0;
  private claimFailing = false;

  constructor(private readonly options: PollerOptions) {}

  /** True while this process holds the poll lock. */
  get polling(): boolean {
    return this.token !== undefined;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.tickInFlight;
    await this.cycleInFlight;
    const token = this.token;
    this.token = undefined;
    this.snapshot = null;
    this.failures = 0;
    this.retryAt = 0;
    if (token) {
      await this.options.coordinator.release(token).catch((error: unknown) => {
        this.options.logger.warn({ err: error }, 'could not release the poll lock');
      });
    }
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.tickInFlight = this.tick().finally(() => {
        this.tickInFlight = undefined;
      });
    }, delayMs);
  }

  private async tick(): Promise<void> {
    const { coordinator, intervalMs, metrics, logger } = this.options;
    const started = Date.now();
    try {
      this.claimToken ??= randomUUID();
      const token = this.token ?? this.claimToken;
      const claim = await coordinator.claim(token);
      if (this.claimFailing) logger.info('poll lock reachable again');
      this.claimFailing = false;
      if (claim === 'elsewhere') {
        if (this.token) logger.info('another instance took the poll lock; standing by');
        this.drop();
        metrics.pollCycles.inc({ outcome: 'standby' });
      } else {
        if (claim === 'acquired' || this.token !== token) {
          const stored = await coordinator.loadSnapshot();
          this.token = token;
          this.claimToken = undefined;
          this.snapshot = newer(this.snapshot, stored);
          logger.info({ resumed: this.snapshot !== null }, 'holding the poll lock; polling');
        }
        if (!this.cycleInFlight && Date.now() >= this.retryAt) {
          this.cycleInFlight = this.cycle(token).finally(() => {
            this.cycleInFlight = undefined;
          });
        }
      }
    } catch (error) {
      // Without the coordinator this process cannot know it holds the lock, nor publish; it
      // keeps its last good snapshot to carry on from (see the class comment).
      if (this.token) this.claimToken = this.token;
      this.token = undefined;
      metrics.pollCycles.inc({ outcome: 'error' });
      // Once per outage: the claim is retried every quarter interval.
      if (!this.claimFailing) logger.error({ err: error }, 'poll lock claim failed; retrying');
      this.claimFailing = true;
    }
    if (this.running) {
      const period = this.token ? intervalMs : intervalMs / 4;
      this.schedule(Math.max(0, started + period - Date.now()));
    }
  }

  /** Another instance polls: its snapshot, not this one's, is the one to carry on from. */
  private drop(): void {
    this.token = undefined;
    this.claimToken = undefined;
    this.snapshot = null;
  }

  private async cycle(token: string): Promise<void> {
    const { source, coordinator, overlapMs, intervalMs, metrics, logger } = this.options;
    const previous = this.snapshot;
    const polledAt = new Date();
    const lastGood = previous ? Date.parse(previous.polledAt) : polledAt.getTime();
    const timer = metrics.pollCycleDuration.startTimer();
    try {
      const rows = await source.livePoll(new Date(lastGood - overlapMs));
      const found = diff(previous, rows, polledAt);
      const transitions = [...found.transitions];
      if (found.vanished.length > 0) {
        const ids = found.vanished.map((run) => run.execId);
        logger.warn({ runs: ids }, 'active runs left the poll window; looking them up by id');
        transitions.push(...vanishedTransitions(found.vanished, await source.runsByIds(ids)));
      }
      const next = advance(previous, found.runs, transitions, polledAt);
      if (next.message) await coordinator.listening();
      if (!(await coordinator.commit(token, previous, next.snapshot, next.message))) {
        if (this.token === token) this.drop();
        metrics.pollCycles.inc({ outcome: 'standby' });
        return;
      }
      if (this.token === token) this.snapshot = next.snapshot;
      if (this.failures > 0) logger.info({ failures: this.failures }, 'poll recovered');
      this.failures = 0;
      this.retryAt = 0;
      metrics.pollCycles.inc({ outcome: 'ok' });
    } catch (error) {
      this.failures++;
      const backoff = Math.min(intervalMs * 2 ** (this.failures - 1), MAX_BACKOFF_MS);
      this.retryAt = Date.now() + backoff;
      metrics.pollCycles.inc({ outcome: 'error' });
      const log = { err: error, failures: this.failures, retryInMs: backoff };
      if (this.failures === 1) logger.error(log, 'poll cycle failed; subscriptions stay open');
      else logger.warn(log, 'poll cycle failed again');
    } finally {
      timer();
    }
  }
}

/** The later of two snapshots: a kept one and what the coordinator has. */
function newer(kept: Snapshot | null, stored: Snapshot | null): Snapshot | null {
  if (!kept || !stored) return kept ?? stored;
  return Date.parse(stored.polledAt) >= Date.parse(kept.polledAt) ? stored : kept;
}
