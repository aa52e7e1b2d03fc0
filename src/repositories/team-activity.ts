import type { Catalog } from '../db/catalog.js';
import type { Driver } from '../db/driver.js';
import { fetchRows } from '../db/sql/query.js';
import { teamActivitySql } from '../db/sql/team-activity.js';
import {
  type ActivityFilter,
  type ActivityWindow,
  activityBuckets,
  type TeamRunActivity,
} from '../model/activity.js';
import type { Viewer } from '../model/viewer.js';
import { requireView } from './views.js';

/** Team runs over time: one statement per window, whatever its number of buckets. */
export class TeamActivityRepository {
  private readonly sql;

  constructor(
    private readonly driver: Driver,
    private readonly catalog: Catalog,
    private readonly viewer: Viewer,
  ) {
    this.sql = teamActivitySql(catalog);
  }

  async activity(
    filter: ActivityFilter,
    window: ActivityWindow,
    from: Date,
    to: Date,
  ): Promise<TeamRunActivity> {
    requireView(this.catalog.teamHistory);
    const groups = await fetchRows(this.driver, this.sql.activity(this.viewer, filter, window));
    return {
      bucket: window.bucket,
      from,
      to,
      buckets: activityBuckets(window, groups, this.sql.waitsReadable),
    };
  }
}
