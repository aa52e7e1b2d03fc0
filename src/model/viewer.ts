/**
 * Who is asking. An administrator sees every owner (DBA_ views, GV$); anyone else sees only
 * the objects of the database owner named by their token, as that owner's USER_ views would.
 */
export interface Viewer {
  /** The database owner whose objects the caller may see; null for an administrator. */
  readonly owner: string | null;
  readonly admin: boolean;
  /** The token subject, for logs. */
  readonly subject: string | null;
  /**
   * When the token expires (epoch milliseconds): WebSocket connections and subscription
   * streams opened with it end then. Absent for a token without `exp` and for anonymous use.
   */
  readonly expiresAt?: number;
}

/** Without authentication configured, every caller is this (loopback only, unless allowed). */
export const ANONYMOUS_ADMIN: Viewer = Object.freeze({ owner: null, admin: true, subject: null });

/**
 * What decides the rows a viewer sees (owner and admin role, not who the token names): two
 * viewers with the same scope get the same answers, so they may share cached ones.
 */
export function visibilityScope(viewer: Viewer): string {
  return viewer.admin ? 'admin' : `owner:${viewer.owner ?? ''}`;
}

/** Who a per-identity limit counts against: the token subject, else its owner or role. */
export function viewerKey(viewer: Viewer): string {
  return JSON.stringify([viewer.subject, viewer.owner, viewer.admin]);
}
