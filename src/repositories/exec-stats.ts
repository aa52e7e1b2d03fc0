import type { Catalog } from '../db/catalog.js';
import type { Binds, Driver, Row } from '../db/driver.js';
import { num, numOrNull, roundedOrNull } from '../db/rows.js';
import { type ExecStatQueryShape, execStatSql, measureAlias } from '../db/sql/exec-stats.js';
import {
  type ExecStat,
  type ExecStatFilter,
  type ExecStatOrder,
  type ExecStatScope,
  type ExecStatSummary,
  MEASURES,
} from '../model/exec-stat.js';
import type { Page } from './agents.js';
import { requireView } from './views.js';

function measures(row: Row): Record<string, number> {
  const values: Record<string, number> = {};
  MEASURES.forEach((m, i) => {
    values[m.field] = num(row[measureAlias(i).toLowerCase()]);
  });
  return values;
}

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
    const { shape, binds } = this.prepare(scope, filter);
    const rows = await this.driver.query(this.sql.page(shape, order.field, order.direction), {
      ...binds,
      page_offset: offset,
      page_limit: limit,
    });
    const totalCount = rows[0]
      ? num(rows[0].totalCount)
      : (await this.summary(scope, filter)).executionCount;
    return {
      totalCount,
      items: rows.map((row) => ({
        measures: measures(row),
        conId: numOrNull(row.conId),
        instId: numOrNull(row.instId),
        llmTimePct: numOrNull(row.llmTimePct),
        toolTimePct: numOrNull(row.toolTimePct),
        unattributedTimeMs: num(row.unattributedTimeMs),
      })),
    };
  }

  async summary(scope: ExecStatScope, filter: ExecStatFilter): Promise<ExecStatSummary> {
    const { shape, binds } = this.prepare(scope, filter);
    const [row = {}] = await this.driver.query(this.sql.summary(shape), binds);
    return {
      executionCount: num(row.executionCount),
      totals: measures(row),
      totalTimeAvgMs: roundedOrNull(row.totalTimeAvgMs, 1),
      totalTimeP50Ms: roundedOrNull(row.totalTimeP50Ms, 1),
      totalTimeP95Ms: roundedOrNull(row.totalTimeP95Ms, 1),
      totalTimeP99Ms: roundedOrNull(row.totalTimeP99Ms, 1),
      totalTimeMaxMs: numOrNull(row.totalTimeMaxMs),
      llmTimePct: numOrNull(row.llmTimePct),
      toolTimePct: numOrNull(row.toolTimePct),
    };
  }

  private prepare(
    scope: ExecStatScope,
    filter: ExecStatFilter,
  ): { shape: ExecStatQueryShape; binds: Binds } {
    requireView(scope === 'CLUSTER' ? this.catalog.execStatCluster : this.catalog.execStat);
    const binds: Record<string, number> = {};
    if (filter.minTotalTimeMs != null) binds.min_total_time = filter.minTotalTimeMs;
    if (filter.conId != null) binds.con_id = filter.conId;
    if (filter.instId != null) binds.inst_id = filter.instId;
    return {
      shape: {
        scope,
        minTotalTime: filter.minTotalTimeMs != null,
        conId: filter.conId != null,
        instId: filter.instId != null,
      },
      binds,
    };
  }
}
