import type { Catalog } from '../../src/db/catalog.js';
import type { Binds, Statement } from '../../src/db/driver.js';
import { agentSql } from '../../src/db/sql/agents.js';
import { type ExecStatQueryShape, execStatSql } from '../../src/db/sql/exec-stats.js';
import { inList } from '../../src/db/sql/statement.js';
import { teamHistorySql } from '../../src/db/sql/team-history.js';
import { teamSql } from '../../src/db/sql/teams.js';
import type { ExecStatOrderField } from '../../src/model/exec-stat.js';

/**
 * Every statement the repositories can issue, each variant built with the binds a repository
 * passes: both view scopes (through the catalogs), filters present and absent, every order
 * field and direction. The modules of src/db/sql that this registry enumerates are listed in
 * ENUMERATED_MODULES; a test fails for any other, so a new module cannot go untested.
 */
export const ENUMERATED_MODULES = [
  'agents.ts',
  'exec-stats.ts',
  'statement.ts',
  'teams.ts',
  'team-history.ts',
];

export interface RegisteredStatement {
  readonly statement: Statement;
  readonly binds: Binds;
  /** Issued through queryWithAgentDetails (which each driver wraps) as well as query. */
  readonly agentDetails: boolean;
}

const page = { page_offset: 0, page_limit: 5 };

/** A non-admin viewer's owner restriction, on and off (USER_ views never restrict). */
function restrictions(_catalog: Catalog, ownerColumns: readonly string[] = ['OWNER']) {
  const owned = (view: { columns: ReadonlySet<string> | null }) =>
    ownerColumns.some((c) => view.columns?.has(c));
  return (view: { columns: ReadonlySet<string> | null }) =>
    owned(view) ? ([false, true] as const) : ([false] as const);
}

const viewerBinds = (restricted: boolean): Record<string, string> =>
  restricted ? { viewer_owner: 'ANALYST' } : {};

function agentStatements(catalog: Catalog): RegisteredStatement[] {
  const sql = agentSql(catalog);
  const one = inList('name', ['ORDER_REQUEST_FLOW']);
  const three = inList('name', ['ORDER_REQUEST_FLOW', 'NO_SUCH_AGENT', 'INCIDENT_TRIAGE']);
  return restrictions(catalog)(catalog.agents).flatMap((restricted) => [
    {
      statement: sql.page(restricted),
      binds: { ...page, ...viewerBinds(restricted) },
      agentDetails: true,
    },
    { statement: sql.count(restricted), binds: viewerBinds(restricted), agentDetails: false },
    {
      statement: sql.byNames(one.text, restricted),
      binds: { ...one.binds, ...viewerBinds(restricted) },
      agentDetails: true,
    },
    {
      statement: sql.byNames(three.text, restricted),
      binds: { ...three.binds, ...viewerBinds(restricted) },
      agentDetails: true,
    },
  ]);
}

function teamStatements(catalog: Catalog): RegisteredStatement[] {
  const sql = teamSql(catalog);
  const teams = inList('team', ['REPORT_SUMMARY_AGENT_TEAM', 'SALES_INSIGHT_TEAM', 'NO_SUCH_TEAM']);
  const statements: RegisteredStatement[] = [];
  const ownerFilter = catalog.teams.columns?.has('OWNER') ? [false, true] : [false];
  for (const restricted of restrictions(catalog)(catalog.teams)) {
    const viewer = viewerBinds(restricted);
    for (const nameContains of [false, true]) {
      for (const owner of ownerFilter) {
        const shape = { nameContains, owner, restricted };
        const binds = {
          ...viewer,
          ...(nameContains ? { name_pattern: '%TEAM%' } : {}),
          ...(owner ? { owner: 'ANALYST' } : {}),
        };
        statements.push(
          { statement: sql.page(shape), binds: { ...binds, ...page }, agentDetails: false },
          { statement: sql.count(shape), binds, agentDetails: false },
        );
      }
    }
    for (const build of [sql.byNames, sql.toolsByTeams, sql.statsByTeams]) {
      statements.push({
        statement: build(teams.text, restricted),
        binds: { ...teams.binds, ...viewer },
        agentDetails: false,
      });
    }
  }
  return statements;
}

function historyStatements(catalog: Catalog): RegisteredStatement[] {
  const sql = teamHistorySql(catalog);
  const statements: RegisteredStatement[] = [];
  const teams = inList('team', ['REPORT_SUMMARY_AGENT_TEAM', 'NO_SUCH_TEAM']);
  const ids = inList('exec', ['NO_SUCH_RUN', 'ANOTHER']);
  const calls = inList('invocation', ['NO_SUCH_CALL']);
  const runRestrictions = restrictions(catalog, ['TEAM_OWNER'])(catalog.teamHistory);
  for (const restricted of runRestrictions) {
    const viewer = viewerBinds(restricted);
    for (const teamName of [false, true]) {
      for (const states of [0, 2]) {
        for (const dates of [false, true]) {
          for (const owner of runRestrictions.length > 1 ? [false, true] : [false]) {
            const shape = {
              teamName,
              states,
              startedAfter: dates,
              startedBefore: dates,
              owner,
              restricted,
            };
            const binds: Record<string, string | Date> = { ...viewer };
            if (teamName) binds.team_name = 'REPORT_SUMMARY_AGENT_TEAM';
            if (states) Object.assign(binds, { state0: 'SUCCEEDED', state1: 'FAILED' });
            if (dates)
              Object.assign(binds, {
                started_after: new Date('2026-09-01T00:00:00Z'),
                started_before: new Date('2026-10-01T00:00:00Z'),
              });
            if (owner) binds.owner = 'ANALYST';
            statements.push(
              { statement: sql.runsCount(shape), binds, agentDetails: false },
              {
                statement: sql.runsByTeams(teams.text, shape),
                binds: { ...binds, ...teams.binds, page_offset: 0, page_end: 3 },
                agentDetails: false,
              },
            );
            for (const field of ['START_DATE', 'END_DATE', 'TEAM_NAME', 'STATE'] as const) {
              for (const direction of ['ASC', 'DESC'] as const) {
                statements.push({
                  statement: sql.runsPage(shape, field, direction),
                  binds: { ...binds, ...page },
                  agentDetails: false,
                });
              }
            }
          }
        }
      }
    }
    statements.push(
      {
        statement: sql.runsByIds(ids.text, restricted),
        binds: { ...ids.binds, ...viewer },
        agentDetails: false,
      },
      {
        statement: sql.waitingByTeams(teams.text, restricted),
        binds: { ...teams.binds, ...viewer },
        agentDetails: false,
      },
    );
  }
  for (const restricted of restrictions(catalog, ['TASK_OWNER'])(catalog.taskHistory)) {
    statements.push({
      statement: sql.tasksByRuns(ids.text, restricted),
      binds: { ...ids.binds, ...viewerBinds(restricted) },
      agentDetails: false,
    });
  }
  for (const restricted of restrictions(catalog, ['TOOL_OWNER'])(catalog.toolHistory)) {
    const viewer = viewerBinds(restricted);
    statements.push(
      {
        statement: sql.toolCallsByRuns(ids.text, restricted),
        binds: { ...ids.binds, ...viewer },
        agentDetails: false,
      },
      {
        statement: sql.toolCallsByIds(calls.text, restricted),
        binds: { ...calls.binds, ...viewer },
        agentDetails: false,
      },
    );
    for (const toolName of [false, true]) {
      for (const agentName of [false, true]) {
        for (const teamExecId of [false, true]) {
          const shape = { toolName, agentName, teamExecId, restricted };
          const binds = {
            ...viewer,
            ...(toolName ? { tool_name: 'SUMMARIZE_REPORT' } : {}),
            ...(agentName ? { agent_name: 'SUMMARIZER' } : {}),
            ...(teamExecId ? { team_exec_id: 'NO_SUCH_RUN' } : {}),
          };
          statements.push(
            {
              statement: sql.toolCallsPage(shape),
              binds: { ...binds, ...page },
              agentDetails: false,
            },
            { statement: sql.toolCallsCount(shape), binds, agentDetails: false },
          );
        }
      }
    }
  }
  return statements;
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
      ...teamStatements(catalog),
      ...historyStatements(catalog),
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
