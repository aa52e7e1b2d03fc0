/**
 * The repository contract, run against every driver: the embedded database always, a real
 * Oracle test schema when ORACLE_TEST_* is set (see targets.ts; otherwise its cases are
 * reported as skipped, by name). Expected values are computed from demoData(), which both
 * databases hold (the Oracle one through test/oracle/fixture.sql). The team and history
 * repositories have their own file, contract-teams.test.ts.
 */
import { readdir } from 'node:fs/promises';
import { describe, expect, test } from 'vitest';
import type { ViewScope } from '../../src/config.js';
import { pgColumn } from '../../src/db/embedded/ddl.js';
import { demoData } from '../../src/db/embedded/demo-data.js';
import { sql } from '../../src/db/sql/fragment.js';
import { statement as statementOf } from '../../src/db/sql/query.js';
import { AppError } from '../../src/errors.js';
import type {
  ExecStat,
  ExecStatFilter,
  ExecStatOrderField,
  ExecStatScope,
} from '../../src/model/exec-stat.js';
import { ANONYMOUS_ADMIN } from '../../src/model/viewer.js';
import {
  ENUMERATED_MODULES,
  registeredStatements,
  VALUES_GIVEN,
} from '../../src/oracle-check/statements.js';
import { AgentRepository } from '../../src/repositories/agents.js';
import { ExecStatRepository } from '../../src/repositories/exec-stats.js';
import { percentileCont, rounded, useContractTarget } from './contract-support.js';
import { TARGETS } from './targets.js';

const data = demoData();
type DemoRow = Record<string, number>;
const demoStats = data.gv$agent_exec_stat as DemoRow[];
const demoAgents = (data.emb_agent_specs ?? []) as { owner: string; agent_name: string }[];

const value = (row: DemoRow, column: string) => row[pgColumn(column)] ?? 0;
const EXEC = 'AGENT_EXECUTOR_TOTAL_TIME_EXEC';
const pct = (row: DemoRow, column: string) =>
  value(row, EXEC) === 0 ? null : Math.round((1000 * value(row, column)) / value(row, EXEC)) / 10;

/** Every order field, with its value in a demo row and in a repository item. */
const ORDERS: Record<
  ExecStatOrderField,
  { demo(row: DemoRow): number | null; item(stat: ExecStat): number | null }
> = {
  TOTAL_TIME: { demo: (r) => value(r, EXEC), item: (s) => s.measures.totalTimeExecMs ?? null },
  LLM_TIME: {
    demo: (r) => value(r, 'AGENT_EXECUTOR_TOTAL_TIME_LLM'),
    item: (s) => s.measures.totalTimeLlmMs ?? null,
  },
  TOOL_TIME: {
    demo: (r) => value(r, 'AGENT_EXECUTOR_TOTAL_TIME_TOOL'),
    item: (s) => s.measures.totalTimeToolMs ?? null,
  },
  LLM_TIME_PCT: { demo: (r) => pct(r, 'AGENT_EXECUTOR_TOTAL_TIME_LLM'), item: (s) => s.llmTimePct },
  TOOL_TIME_PCT: {
    demo: (r) => pct(r, 'AGENT_EXECUTOR_TOTAL_TIME_TOOL'),
    item: (s) => s.toolTimePct,
  },
  INPUT_TOKENS: {
    demo: (r) => value(r, 'AGENT_EXECUTOR_INPUT_TOKENS'),
    item: (s) => s.measures.inputTokens ?? null,
  },
  OUTPUT_TOKENS: {
    demo: (r) => value(r, 'AGENT_EXECUTOR_OUTPUT_TOKENS'),
    item: (s) => s.measures.outputTokens ?? null,
  },
  LLM_CALLS: {
    demo: (r) => value(r, 'AGENT_EXECUTOR_LLM_CALL_COUNT'),
    item: (s) => s.measures.llmCallCount ?? null,
  },
  TOOL_CALLS: {
    demo: (r) => value(r, 'AGENT_EXECUTOR_TOOL_CALL_COUNT'),
    item: (s) => s.measures.toolCallCount ?? null,
  },
};
const ORDER_FIELDS = Object.keys(ORDERS) as ExecStatOrderField[];

function demoSet(scope: ExecStatScope, filter: ExecStatFilter): DemoRow[] {
  return demoStats.filter(
    (r) =>
      (scope === 'CLUSTER' || r.inst_id === 1) &&
      (filter.minTotalTimeMs == null || value(r, EXEC) > filter.minTotalTimeMs) &&
      (filter.conId == null || r.con_id === filter.conId) &&
      (filter.instId == null || r.inst_id === filter.instId),
  );
}

/** Values sorted as ORDER BY … NULLS LAST sorts them. */
function sortedValues(values: (number | null)[], direction: 'ASC' | 'DESC'): (number | null)[] {
  const present = values.filter((v): v is number => v !== null);
  present.sort((a, b) => (direction === 'ASC' ? a - b : b - a));
  return [...present, ...values.filter((v) => v === null)];
}

const ORDER_REQUEST_FLOW = {
  name: 'ORDER_REQUEST_FLOW',
  agentId: 1001,
  owner: 'APP_USER',
  createTime: new Date('2026-08-20T12:34:56.000Z'),
  description: null,
  // The Agent Spec shape has no STATUS or LAST_MODIFIED (the Select AI shape has).
  status: null,
  lastModified: null,
  inputs: [{ title: 'order_id', type: 'string', required: true }],
  outputs: [{ title: 'order_id', type: 'string', required: true }],
  callContract: {
    inputFormat: 'json_array_name_value_pairs',
    requiredKeys: ['name', 'value'],
    nameMatches: 'inputs[].title (exact match)',
  },
};

for (const target of TARGETS) {
  const title = `repository contract on ${target.name}${target.skipReason ? ` (${target.skipReason})` : ''}`;
  describe.skipIf(target.skipReason !== undefined)(title, () => {
    const contract = useContractTarget(target);
    const { catalogs, counted } = contract;

    const agents = (scope: ViewScope = 'dba') =>
      new AgentRepository(contract.driver, catalogs[scope], ANONYMOUS_ADMIN);
    const execStats = () => new ExecStatRepository(contract.driver, catalogs.dba);

    describe('catalog discovery', () => {
      test('finds every view of both scopes, with the known column variants', () => {
        for (const catalog of Object.values(catalogs)) {
          const missing = Object.values(catalog).filter(
            (v) => typeof v === 'object' && v !== null && 'grant' in v && v.columns === null,
          );
          expect(missing).toEqual([]);
        }
        expect([...(catalogs.dba.agents.columns ?? [])].sort()).toEqual(
          ['AGENT_ID', 'AGENT_NAME', 'CREATE_TIME', 'INPUTS', 'OUTPUTS', 'OWNER'].sort(),
        );
        expect(catalogs.user.agents.columns?.has('OWNER')).toBe(false);
        expect(catalogs.dba.taskHistory.columns?.has('COVERSATION_PARAM')).toBe(true);
        expect(catalogs.dba.teams.columns?.has('AGENT_TEAM_NAME')).toBe(true);
        expect(catalogs.dba.execStatCluster.columns?.has('INST_ID')).toBe(true);
        expect(catalogs.dba.execStat.columns?.has('INST_ID')).toBe(false);
      });
    });

    describe('AgentRepository', () => {
      test('page: ordered by owner and name, with the total, in one statement', async () => {
        const [page, issued] = await counted(() => agents().page(0, 3));
        expect(page.totalCount).toBe(demoAgents.length);
        expect(page.items.map((a) => a.name)).toEqual([
          'REPORT_SUMMARIZER',
          'SALES_FORECASTER',
          'ORDER_ASSISTANT',
        ]);
        expect(page.items[2]?.description).toBe(
          'Answers customer questions about an order using the order history.',
        );
        expect(issued).toEqual(['agents.page']);
      });

      test('page: the last page is short', async () => {
        const page = await agents().page(5, 10);
        expect(page.items.map((a) => `${a.owner}.${a.name}`)).toEqual([
          'OPS.INCIDENT_TRIAGE',
          'OPS.ONCALL_NOTIFIER',
        ]);
        expect(page.totalCount).toBe(7);
      });

      test('page: past the end costs a count statement for the total', async () => {
        const [page, issued] = await counted(() => agents().page(100, 10));
        expect(page).toEqual({ items: [], totalCount: 7 });
        expect(issued).toEqual(['agents.page', 'agents.count']);
      });

      test('byNames: in the order asked, null for unknown names, one statement', async () => {
        const [found, issued] = await counted(() =>
          agents().byNames(['ORDER_REQUEST_FLOW', 'NO_SUCH_AGENT', 'INCIDENT_TRIAGE']),
        );
        expect(found[0]).toEqual(ORDER_REQUEST_FLOW);
        expect(found[1]).toBeNull();
        // Another owner's agent: DESCRIBE_AGENT (a name, no owner) is not asked about it.
        expect(found[2]).toMatchObject({
          name: 'INCIDENT_TRIAGE',
          owner: 'OPS',
          description: null,
          callContract: null,
          inputs: [
            { title: 'incident_id', type: 'string' },
            { title: 'severity', type: 'string' },
            { title: 'summary', type: 'string' },
          ],
        });
        expect(issued).toEqual(['agents.byNames']);
      });

      test('user scope: only the session user’s agents, owned by the session user', async () => {
        const [page, issued] = await counted(() => agents('user').page(0, 10));
        expect(page.totalCount).toBe(3);
        expect(page.items.map((a) => a.name)).toEqual([
          'ORDER_ASSISTANT',
          'ORDER_REQUEST_FLOW',
          'REFUND_CHECKER',
        ]);
        expect(new Set(page.items.map((a) => a.owner))).toEqual(new Set([target.sessionUser]));
        expect(issued).toEqual(['agents.page']);
        expect(await agents('user').byNames(['SALES_FORECASTER', 'REFUND_CHECKER'])).toEqual([
          null,
          expect.objectContaining({ name: 'REFUND_CHECKER', agentId: 1003 }),
        ]);
      });
    });

    describe('ExecStatRepository', () => {
      const filters: [string, ExecStatScope, ExecStatFilter][] = [
        ['INSTANCE, unfiltered', 'INSTANCE', {}],
        ['CLUSTER, unfiltered', 'CLUSTER', {}],
        [
          'INSTANCE, slower than 2000 ms in container 3',
          'INSTANCE',
          { minTotalTimeMs: 2000, conId: 3 },
        ],
        ['CLUSTER, instance 2', 'CLUSTER', { instId: 2 }],
      ];

      test.each(filters)('summary: %s', async (_, scope, filter) => {
        const rows = demoSet(scope, filter);
        const totals = rows.map((r) => value(r, EXEC));
        const [summary, issued] = await counted(() => execStats().summary(scope, filter));
        expect(summary.executionCount).toBe(rows.length);
        expect(summary.totals.inputTokens).toBe(
          rows.reduce((sum, r) => sum + value(r, 'AGENT_EXECUTOR_INPUT_TOKENS'), 0),
        );
        expect(summary.totals.totalTimeExecMs).toBe(totals.reduce((a, b) => a + b, 0));
        expect(summary.totalTimeMaxMs).toBe(Math.max(...totals));
        expect(summary.totalTimeAvgMs).toBe(
          rounded(totals.reduce((a, b) => a + b, 0) / totals.length, 1),
        );
        expect(summary.totalTimeP50Ms).toBe(rounded(percentileCont(totals, 0.5), 1));
        expect(summary.totalTimeP95Ms).toBe(rounded(percentileCont(totals, 0.95), 1));
        expect(issued).toEqual([`execStats.summary.${scope.toLowerCase()}`]);
      });

      test.each(filters)('page in every order, both directions: %s', async (_, scope, filter) => {
        const rows = demoSet(scope, filter);
        for (const field of ORDER_FIELDS) {
          for (const direction of ['ASC', 'DESC'] as const) {
            const [page, issued] = await counted(() =>
              execStats().page(scope, filter, { field, direction }, 0, 25),
            );
            const expected = sortedValues(rows.map(ORDERS[field].demo), direction).slice(0, 25);
            const actual = page.items.map(ORDERS[field].item);
            expect(
              actual.map((v) => v === null),
              `${field} ${direction}`,
            ).toEqual(expected.map((v) => v === null));
            actual.forEach((v, i) => {
              if (v !== null)
                expect(v, `${field} ${direction} #${i}`).toBeCloseTo(expected[i] ?? 0, 1);
            });
            expect(page.totalCount).toBe(rows.length);
            expect(issued).toEqual([`execStats.page.${scope.toLowerCase()}`]);
          }
        }
      });

      test('page: the seed rows carry their diagnostics; CLUSTER rows their instance', async () => {
        const page = await execStats().page(
          'CLUSTER',
          { conId: 4, instId: 2 },
          { field: 'TOTAL_TIME', direction: 'ASC' },
          0,
          1,
        );
        // The execution too short to register: percentages null, not a division error.
        expect(page.items[0]).toMatchObject({
          conId: 4,
          instId: 2,
          llmTimePct: null,
          toolTimePct: null,
          unattributedTimeMs: 0,
        });
        const instance = await execStats().page(
          'INSTANCE',
          {},
          { field: 'LLM_TIME', direction: 'DESC' },
          0,
          1,
        );
        expect(instance.items[0]?.instId).toBeNull();
      });

      test('page: an empty page asks the summary for the total', async () => {
        const [page, issued] = await counted(() =>
          execStats().page(
            'INSTANCE',
            { minTotalTimeMs: 1e9 },
            { field: 'TOTAL_TIME', direction: 'DESC' },
            0,
            10,
          ),
        );
        expect(page).toEqual({ items: [], totalCount: 0 });
        expect(issued).toEqual(['execStats.page.instance', 'execStats.summary.instance']);
      });

      test('a view that is not granted fails alone, naming it and its grant, before any SQL', async () => {
        const catalog = {
          ...catalogs.dba,
          execStatCluster: { ...catalogs.dba.execStatCluster, columns: null },
        };
        const repository = new ExecStatRepository(contract.driver, catalog);
        const [error, issued] = await counted(() =>
          repository.summary('CLUSTER', {}).catch((e: unknown) => e),
        );
        expect(error).toBeInstanceOf(AppError);
        expect(error).toMatchObject({
          code: 'FORBIDDEN',
          message:
            'GV$AGENT_EXEC_STAT is missing or not granted to the agent-graph database user (grant SELECT ON GV_$AGENT_EXEC_STAT)',
        });
        expect(issued).toEqual([]);
        expect((await repository.summary('INSTANCE', {})).executionCount).toBeGreaterThan(0);
      });
    });

    test('a bind that the statement does not use is rejected (as Oracle does)', async () => {
      const { driver } = contract;
      const count = statementOf('count', sql`SELECT COUNT(*) AS N FROM V$AGENT_EXEC_STAT`);
      expect((await driver.query(count))[0]?.n).toBe(demoSet('INSTANCE', {}).length);
      await expect(driver.query(count, { unused: 1 })).rejects.toThrow();
    });

    describe('every statement the repositories can issue (src/oracle-check/statements.ts)', () => {
      test('runs, each variant, with exactly the binds its placeholders name and no value in its text', async () => {
        const { driver } = contract;
        const entries = registeredStatements([catalogs.dba, catalogs.user], ORDER_FIELDS);
        expect(entries.length).toBeGreaterThan(200);
        for (const { statement, binds, agentDetails } of entries) {
          // Oracle rejects a bind that the text does not use (NJS-098), PostgreSQL does not.
          expect(Object.keys(binds).sort(), statement.text).toEqual(
            [...new Set(statement.placeholders)].sort(),
          );
          for (const value of VALUES_GIVEN) expect(statement.text).not.toContain(value);
          const runs = [() => driver.query(statement, binds)];
          if (agentDetails) runs.push(() => driver.queryWithAgentDetails(statement, binds));
          for (const run of runs) {
            const rows = await run().catch((error: unknown) => {
              throw new Error(`${statement.name} failed: ${String(error)}\n${statement.text}`);
            });
            expect(Array.isArray(rows)).toBe(true);
          }
        }
      });
    });

    test.skipIf(target.name !== 'oracle')(
      'a statement on a view the database does not have is FORBIDDEN, naming the view',
      async () => {
        const error = await contract.driver
          .query(statementOf('missing', sql`SELECT COUNT(*) AS N FROM USER_AI_AGENT_NO_SUCH_VIEW`))
          .catch((e: unknown) => e);
        expect(error).toMatchObject({
          code: 'FORBIDDEN',
          message: expect.stringMatching(/^USER_AI_AGENT_NO_SUCH_VIEW is missing or not granted/),
        });
      },
    );
  });
}

test('the statement registry enumerates every module of src/db/sql', async () => {
  const modules = await readdir(new URL('../../src/db/sql/', import.meta.url));
  const missing = modules.filter((m) => !ENUMERATED_MODULES.includes(m));
  expect(missing, 'add their statement variants to src/oracle-check/statements.ts').toEqual([]);
});
