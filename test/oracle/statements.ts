import type { Catalog } from '../../src/db/catalog.js';
import type { Binds, Statement } from '../../src/db/driver.js';
import { agentSql } from '../../src/db/sql/agents.js';
import { type ExecStatQueryShape, execStatSql } from '../../src/db/sql/exec-stats.js';
import { inList } from '../../src/db/sql/statement.js';
import type { ExecStatOrderField } from '../../src/model/exec-stat.js';

/**
 * Every statement the repositories can issue, each variant built with the binds a repository
 * passes: both view scopes (through the catalogs), filters present and absent, every order
 * field and direction. The modules of src/db/sql that this registry enumerates are listed in
 * ENUMERATED_MODULES; a test fails for any other, so a new module cannot go untested.
 */
export const ENUMERATED_MODULES = ['agents.ts', 'exec-stats.ts', 'statement.ts'];

export interface RegisteredStatement {
  readonly statement: Statement;
  readonly binds: Binds;
  /** Issued through queryWithAgentDetails (which each driver wraps) as well as query. */
  readonly agentDetails: boolean;
}

const page = { page_offset: 0, page_limit: 5 };

function agentStatements(catalog: Catalog): RegisteredStatement[] {
  const sql = agentSql(catalog);
  const one = inList('name', ['ORDER_REQUEST_FLOW']);
  const three = inList('name', ['ORDER_REQUEST_FLOW', 'NO_SUCH_AGENT', 'INCIDENT_TRIAGE']);
  return [
    { statement: sql.page, binds: page, agentDetails: true },
    { statement: sql.count, binds: {}, agentDetails: false },
    { statement: sql.byNames(one.text), binds: one.binds, agentDetails: true },
    { statement: sql.byNames(three.text), binds: three.binds, agentDetails: true },
  ];
}

function execStatStatements(
  catalog: Catalog,
  orderFields: readonly ExecStatOrderField[],
): RegisteredStatement[] {
  const sql = execStatSql(catalog);
  const statements: RegisteredStatement[] = [];
  for (const scope of ['INSTANCE', 'CLUSTER'] as const) {
    // V$ has no INST_ID; the schema rejects that filter outside CLUSTER.
    for (const instId of scope === 'CLUSTER' ? [false, true] : [false]) {
      for (const minTotalTime of [false, true]) {
        for (const conId of [false, true]) {
          const shape: ExecStatQueryShape = { scope, minTotalTime, conId, instId };
          const binds: Record<string, number> = {};
          if (minTotalTime) binds.min_total_time = 2000;
          if (conId) binds.con_id = 3;
          if (instId) binds.inst_id = 2;
          statements.push({ statement: sql.summary(shape), binds, agentDetails: false });
          for (const field of orderFields) {
            for (const direction of ['ASC', 'DESC'] as const) {
              statements.push({
                statement: sql.page(shape, field, direction),
                binds: { ...binds, ...page },
                agentDetails: false,
              });
            }
          }
        }
      }
    }
  }
  return statements;
}

export function registeredStatements(
  catalogs: readonly Catalog[],
  orderFields: readonly ExecStatOrderField[],
): RegisteredStatement[] {
  const unique = new Map<string, RegisteredStatement>();
  for (const catalog of catalogs) {
    for (const entry of [
      ...agentStatements(catalog),
      ...execStatStatements(catalog, orderFields),
    ]) {
      unique.set(entry.statement.text, entry);
    }
  }
  return [...unique.values()];
}

/** The `:name` placeholders of a statement (our SQL quotes no text containing colons). */
export function placeholders(text: string): Set<string> {
  return new Set([...text.matchAll(/(?<!:):([A-Za-z_]\w*)/g)].map((m) => m[1] as string));
}
