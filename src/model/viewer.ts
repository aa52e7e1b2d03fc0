import type { Clock } from './clock.js';

/**
 * Who is asking. An administrator sees every owner (DBA_ views, GV$); anyone else sees only
 * the objects of the database owner named by their token, as that owner's USER_ views would.
 * The two shapes are the only ones: a caller who is neither has no rows to be limited to.
 */
export type Viewer = {
  /** The token subject, for logs. */
  readonly subject: string | null;
  /**
   * When the token expires: WebSocket connections and subscription streams opened with it
   * end then. Absent for a token without `exp` and for anonymous use.
   */
  readonly expiry?: TokenExpiry;
} & (
  | { readonly admin: true; readonly owner: null }
  /** The database owner whose objects the caller may see. */
  | { readonly admin: false; readonly owner: string }
);

/**
 * When a token expires, by the clock that verified it: a WebSocket connection
 * (src/transport/websocket.ts) and every subscription stream (src/hardening/expiry.ts) opened
 * with it end then, and a message that comes after is refused.
 */
export interface TokenExpiry {
  /** The token's `exp`, in epoch milliseconds. */
  readonly at: number;
  passed(): boolean;
  /** Runs `run` when the token expires; the returned function cancels it. */
  whenPassed(run: () => void): () => void;
}

export const tokenExpiry = (at: number, clock: Clock): TokenExpiry => ({
  at,
  passed: () => clock.now() >= at,
  whenPassed: (run) => clock.at(at, run),
});

/** Without authentication configured, every caller is this (loopback only, unless allowed). */
export const ANONYMOUS_ADMIN: Viewer = Object.freeze({ owner: null, admin: true, subject: null });

/**
 * The owner rule, one definition for both of its forms: the owner whose objects a viewer
 * sees, null for every owner's (an administrator). SQL writes it as a condition on the owner
 * column (`viewerOwns` in src/db/sql/owners.ts); in memory, `ownerAdmits` applies it to each
 * event's run (src/live/hub.ts) and to what an action may touch (src/repositories/actions.ts,
 * agent-executions.ts). test/owner-visibility.test.ts holds the SQL and the hub equal.
 */
export const visibleOwner = (viewer: Pick<Viewer, 'admin' | 'owner'>): string | null =>
  viewer.admin ? null : viewer.owner;

/** In memory, whether a row of `rowOwner` is one that `visibleOwner`'s answer lets through. */
export const ownerAdmits = (owner: string | null | undefined, rowOwner: string): boolean =>
  !owner || rowOwner === owner;

/**
 * What decides the rows a viewer sees (owner and admin role, not who the token names): two
 * viewers with the same scope get the same answers, so they may share cached ones.
 */
export function visibilityScope(viewer: Viewer): string {
  const owner = visibleOwner(viewer);
  return owner === null ? 'admin' : `owner:${owner}`;
}

/**
 * The scopes the schema's fields are authorized by (src/builder.ts): administrators, and who
 * may read the runtime statistics, which have no owner (everyone when STATS_PUBLIC is set).
 */
export function authScopes(
  viewer: Pick<Viewer, 'admin'>,
  statsPublic: boolean,
): { readonly admin: boolean; readonly statsReader: boolean } {
  return { admin: viewer.admin, statsReader: viewer.admin || statsPublic };
}

/**
 * What decides a whole answer: the rows (visibilityScope) and the fields the viewer's scopes
 * open, which settings decide as well. Instances that share a cache with different settings
 * (STATS_PUBLIC on one and not the other, during a rolling change) get different scopes.
 */
export function answerScope(viewer: Viewer, statsPublic: boolean): string {
  const { admin, statsReader } = authScopes(viewer, statsPublic);
  return JSON.stringify([visibilityScope(viewer), admin, statsReader]);
}

/** Who a per-identity limit counts against: the token subject, else its owner or role. */
export function viewerKey(viewer: Viewer): string {
  return JSON.stringify([viewer.subject, viewer.owner, viewer.admin]);
}
