/**
 * The owner rule, once: ownedBy(...) / viewerOwns(...) is the condition that limits a view to
 * one owner's rows. Where the view cannot hold that owner's rows, the condition is NO_ROWS: the
 * query holding it is never sent and reads as no rows.
 */

import { type Viewer, visibleOwner } from '../../model/viewer.js';
import { type Catalog, ownerColumn, type ViewInfo } from '../catalog.js';
import { type Fragment, type Literal, NO_ROWS, sql } from './fragment.js';

/** The condition on an owner column (`h.TEAM_OWNER`, …) that keeps one owner's rows. */
export type OwnerCondition = <C extends string>(column: Literal<C>) => Fragment | undefined;

/**
 * The owner rule, written once: the rows of `view` that belong to `owner`. A view with an
 * owner column binds the owner (`column = :bindName`); a USER_ view has no owner column and
 * holds only the session user's rows, so it needs no condition for that user and has no row
 * of anyone else's. No owner (null) means no condition.
 */
export function ownedBy(
  catalog: Catalog,
  view: ViewInfo,
  ownerColumns: readonly string[],
  owner: string | null | undefined,
  bindName: string,
): OwnerCondition {
  if (!owner) return () => undefined;
  if (ownerColumn(view, ownerColumns))
    return <C extends string>(column: Literal<C>) =>
      sql`${sql.raw<C>(column)} = ${sql.bind(bindName, owner)}`;
  return owner === catalog.sessionUser ? () => undefined : () => NO_ROWS;
}

/** What a viewer may read of a view: the rows of its visibleOwner (src/model/viewer.ts). */
export function viewerOwns(
  catalog: Catalog,
  view: ViewInfo,
  viewer: Pick<Viewer, 'admin' | 'owner'>,
  ownerColumns: readonly string[] = ['OWNER'],
): OwnerCondition {
  return ownedBy(catalog, view, ownerColumns, visibleOwner(viewer), 'viewer_owner');
}
