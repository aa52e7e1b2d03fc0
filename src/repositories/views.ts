import type { ViewInfo } from '../db/catalog.js';
import { AppError } from '../errors.js';

/** Fields that need a view the database does not show us fail alone, naming the grant. */
export function requireView(view: ViewInfo): void {
  if (view.columns === null) {
    throw new AppError(
      'FORBIDDEN',
      `${view.name} is missing or not granted to the agent-graph database user (grant ${view.grant})`,
    );
  }
}
