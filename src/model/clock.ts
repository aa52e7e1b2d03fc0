/**
 * Where a token's expiry reads the time: the system's clock, or one a test moves forward
 * instead of waiting for a token to expire (test/support/clock.ts). A server takes it from its
 * options (src/server.ts), so verification (src/auth/jwt.ts) and the end of a session on every
 * transport (src/hardening/expiry.ts, src/transport/websocket.ts) read one time.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Runs `run` once now() reaches `at` (epoch ms); the returned function cancels it. */
  at(at: number, run: () => void): () => void;
}

/** setTimeout's delay is a signed 32-bit number of milliseconds (about 24.8 days). */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** Runs `run` at `at` (epoch ms) of the system's clock, however far away; the returned function cancels it. */
export function runAt(at: number, run: () => void): () => void {
  let timer: NodeJS.Timeout;
  const schedule = () => {
    const delay = at - Date.now();
    timer =
      delay > MAX_DELAY_MS
        ? setTimeout(schedule, MAX_DELAY_MS)
        : setTimeout(run, Math.max(0, delay));
  };
  schedule();
  return () => clearTimeout(timer);
}

export const systemClock: Clock = { now: () => Date.now(), at: runAt };
