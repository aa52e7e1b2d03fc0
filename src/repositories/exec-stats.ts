import type { Catalog } from '../db/catalog.js';
import type { Driver } from '../db/driver.js';
import { execStatSql } from '../db/sql/exec-stats.js';
import { fetchPage, type Page } from '../db/sql/pages.js';
import { fetchRows } from '../db/sql/query.js';
import type {
  ExecStat,
  ExecStatFilter,
  ExecStatOrder,
  ExecStatScope,
  ExecStatSummary,
} from '../model/exec-stat.js';
import { requireView } from './views.js';

export class ExecStatRepository {
  private readonly sql;

  constructor(
    private readonly driver: Driver,
    private readonly catalog: Catalog,
  ) {
    this.sql = execStatSql(catalog);
  }

  async page(
    scope: ExecStatScope,
    filter: ExecStatFilter,
    order: ExecStatOrder,
    offset: number,
    limit: number,
  ): Promise<Page<ExecStat>> {
    this.requireScope(scope);
    return fetchPage(this.driver, this.sql.page(scope, filter, order, { offset, limit }));
  }

  async summary(scope: ExecStatScope, filter: ExecStatFilter): Promise<ExecStatSummary> {
    this.requireScope(scope);
    const summary = this.sql.summary(scope, filter);
    const [found] = await fetchRows(this.driver, summary);
    return found ?? summary.decode({});
  }

  private requireScope(scope: ExecStatScope): void {
    requireView(scope === 'CLUSTER' ? this.catalog.execStatCluster : this.catalog.execStat);
  }
}
