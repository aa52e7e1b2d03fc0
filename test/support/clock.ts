import { type Clock, runAt } from '../../src/model/clock.js';

interface Scheduled {
  readonly at: number;
  readonly run: () => void;
  cancel: () => void;
}

/**
 * A clock that runs with the system's and can be moved forward at once: a test moves it to a
 * token's expiry instead of waiting for it. What it schedules runs when the clock reaches it,
 * moved there or by the passing of real time.
 */
export class MovableClock implements Clock {
  private offset = 0;
  private readonly pending = new Set<Scheduled>();

  now(): number {
    return Date.now() + this.offset;
  }

  at(at: number, run: () => void): () => void {
    const scheduled: Scheduled = { at, run, cancel: () => {} };
    this.pending.add(scheduled);
    this.schedule(scheduled);
    return () => {
      scheduled.cancel();
      this.pending.delete(scheduled);
    };
  }

  /** Moves the clock forward to `at` (epoch ms); what is due by then runs next, in order. */
  moveTo(at: number): void {
    this.offset += Math.max(0, at - this.now());
    const all = [...this.pending].sort((a, b) => a.at - b.at);
    for (const scheduled of all) {
      scheduled.cancel();
      this.schedule(scheduled);
    }
  }

  /** A system timer for the instant this clock reaches `scheduled.at` (at once, if due). */
  private schedule(scheduled: Scheduled): void {
    scheduled.cancel = runAt(scheduled.at - this.offset, () => {
      this.pending.delete(scheduled);
      scheduled.run();
    });
  }
}
