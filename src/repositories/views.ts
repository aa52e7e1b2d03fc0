import { type Catalog, ownerColumn, type ViewInfo } from '../db/catalog.js';
import { AppError } from '../errors.js';
import type { Viewer } from '../model/viewer.js';

/** Fields that need a view the database does not show us fail alone, naming the grant. */
export function requireView(view: ViewInfo): void {
  if (view.columns === null) {
    throw new AppError(
      'FORBIDDEN',
      `${view.name} is missing or not granted to the agent-graph database user (grant ${view.grant})`,
    );
  }
}

/**
 * What a viewer may read of a view: everything, only rows whose owner column holds their
 * owner (DBA_ views), or nothing (a USER_ view shows the session user's rows, and the
 * viewer acts as another owner).
 */
export type OwnerAccess =
  | { readonly kind: 'all' }
  | { readonly kind: 'owner'; readonly binds: { readonly viewer_owner: string } }
  | { readonly kind: 'nothing' };

const ALL: OwnerAccess = { kind: 'all' };
const NOTHING: OwnerAccess = { kind: 'nothing' };

export function ownerAccess(
  viewer: Viewer,
  catalog: Catalog,
  view: ViewInfo,
  ownerColumns: readonly string[] = ['OWNER'],
): OwnerAccess {
  if (viewer.admin || viewer.owner === null) return ALL;
  if (ownerColumn(view, ownerColumns))
    return { kind: 'owner', binds: { viewer_owner: viewer.owner } };
  return viewer.owner === catalog.sessionUser ? ALL : NOTHING;
}
