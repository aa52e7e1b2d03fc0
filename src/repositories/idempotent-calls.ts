import { createHash } from 'node:crypto';
import { badUserInput } from '../errors.js';

/** How long a key answers with its first call's result (issue 25 item 9). */
export const IDEMPOTENCY_WINDOW_MS = 10 * 60_000;
/** Keys remembered per process: past it the oldest is forgotten first. */
export const IDEMPOTENCY_MAX_KEYS = 10_000;

interface Entry<T> {
  /** What the first call asked for: a key reused for another request is refused. */
  readonly request: string;
  readonly result: Promise<T>;
  readonly expiresAt: number;
}

/** One call per key: the caller's own (first), or the first one's result (a replay). */
export interface Claim<T> {
  readonly result: Promise<T>;
  readonly replayed: boolean;
}

/**
 * The calls made with an idempotency key, per process: within the window the same key (of
 * the same caller, whom `scope` names) gets the first call's result, and a duplicate that
 * arrives while the first is still running shares it. A call that fails is forgotten, so a
 * retry with its key runs again.
 */
export class IdempotentCalls<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(
    private readonly windowMs = IDEMPOTENCY_WINDOW_MS,
    private readonly maxKeys = IDEMPOTENCY_MAX_KEYS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * `request` names what the call does (its arguments): the same key with another request
   * is BAD_USER_INPUT, as replaying the first call's result would answer a question not asked.
   */
  claim(scope: string, key: string, request: readonly string[], call: () => Promise<T>): Claim<T> {
    const id = JSON.stringify([scope, key]);
    const fingerprint = createHash('sha256').update(JSON.stringify(request)).digest('base64url');
    const now = this.now();
    const known = this.entries.get(id);
    if (known && known.expiresAt > now) {
      if (known.request !== fingerprint) {
        throw badUserInput(
          `This idempotency key was already used, within the last ${this.windowMs / 60_000} minutes, for a call with other arguments: use a new key for a new call`,
        );
      }
      return { result: known.result, replayed: true };
    }
    this.entries.delete(id);
    this.makeRoom(now);
    const result = call();
    const entry: Entry<T> = { request: fingerprint, result, expiresAt: now + this.windowMs };
    this.entries.set(id, entry);
    result.catch(() => {
      if (this.entries.get(id) === entry) this.entries.delete(id);
    });
    return { result, replayed: false };
  }

  /** Drops the expired keys, which come first (insertion order), then the oldest past the cap. */
  private makeRoom(now: number): void {
    for (const [id, entry] of this.entries) {
      if (entry.expiresAt > now && this.entries.size < this.maxKeys) break;
      this.entries.delete(id);
    }
  }
}
