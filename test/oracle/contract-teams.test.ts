/**
 * The repository contract for agent teams and their history (TeamRepository and
 * TeamHistoryRepository), run like contract.test.ts against every driver: the embedded
 * database always, a real Oracle test schema when ORACLE_TEST_* is set (targets.ts).
 *
 * Every method is checked for five audiences: DBA_ and USER_ views, each with the
 * administrator and with non-admin viewers. A non-admin viewer sees only their owner's rows
 * in DBA_ views; in USER_ views (the session user's rows) a viewer who is another owner sees
 * nothing, and no statement is issued for them. Expected values come from demo-teams.ts,
 * computed from demoData() without SQL; statement names are asserted with `counted()`.
 */
import { describe, expect, test } from 'vitest';
import type { ViewScope } from '../../src/config.js';
import { OWNERS } from '../../src/db/embedded/demo-data.js';
import type { Page } from '../../src/db/sql/pages.js';
import type { Positioned } from '../../src/model/keyset.js';
import { everyColumn, plannedChild, RELATIONS } from '../../src/model/plan.js';
import {
  type Team,
  type TeamRun,
  type TeamRunFilter,
  type TeamStats,
  type ToolCallFilter,
  teamKey,
  teamRefOf,
} from '../../src/model/team.js';
import { ANONYMOUS_ADMIN, type Viewer } from '../../src/model/viewer.js';
import { AgentRepository } from '../../src/repositories/agents.js';
import { TeamHistoryRepository } from '../../src/repositories/team-history.js';
import { TeamRepository } from '../../src/repositories/teams.js';
import { useContractTarget } from './contract-support.js';
import {
  CALLS,
  callPage,
  callsOfRun,
  matchesRun,
  NEWEST_FIRST,
  RUNS,
  sortRuns,
  sortTeams,
  TASKS,
  TEAMS,
  tasksOfRun,
  teamStats,
  teamTools,
} from './demo-teams.js';
import { TARGETS } from './targets.js';

const ANALYST: Viewer = { owner: 'ANALYST', admin: false, subject: null };

interface Audience {
  readonly label: string;
  readonly scope: ViewScope;
  readonly viewer: Viewer;
  /** Whether the audience sees rows of this owner. */
  readonly sees: (owner: string) => boolean;
  /** Sees no row at all: every method answers empty without a statement. */
  readonly blind: boolean;
}

function audiences(sessionUser: string): Audience[] {
  const session = (owner: string) => owner === sessionUser;
  const list: Omit<Audience, 'blind'>[] = [
    { label: 'DBA views, admin', scope: 'dba', viewer: ANONYMOUS_ADMIN, sees: () => true },
    {
      label: 'DBA views, viewer ANALYST',
      scope: 'dba',
      viewer: ANALYST,
      sees: (owner) => owner === 'ANALYST',
    },
    { label: 'USER views, admin', scope: 'user', viewer: ANONYMOUS_ADMIN, sees: session },
    {
      label: 'USER views, session-user viewer',
      scope: 'user',
      viewer: { owner: sessionUser, admin: false, subject: null },
      sees: session,
    },
    {
      label: 'USER views, ANALYST (another owner)',
      scope: 'user',
      viewer: ANALYST,
      sees: () => false,
    },
  ];
  return list.map((a) => ({ ...a, blind: !OWNERS.some(a.sees) }));
}

/** What an audience sees of the demo data. */
function visible(audience: Audience) {
  const runs = RUNS.filter((r) => audience.sees(r.owner));
  return {
    // A team's id is its key where the view lists every owner (DBA_), its name otherwise.
    teams: TEAMS.filter((t) => audience.sees(t.owner)).map((t) =>
      audience.scope === 'dba' ? t : { ...t, id: t.name },
    ),
    runs,
    tasks: TASKS.filter((t) => audience.sees(t.owner ?? '')),
    calls: CALLS.filter((c) => audience.sees(c.toolOwner ?? '')),
  };
}

/** A run, task and call of each owner, with an unknown key and a repeated one. */
const RUN_IDS = [
  ...OWNERS.map((o) => RUNS.find((r) => r.owner === o)?.execId ?? ''),
  'NO_SUCH_RUN',
];
const CALL_IDS = [
  ...OWNERS.map((o) => CALLS.find((c) => c.toolOwner === o)?.invocationId ?? ''),
  'NO_SUCH_CALL',
];
/** The run of ANALYST's with the most tool calls. */
const BUSY_RUN = RUNS.filter((r) => r.owner === 'ANALYST')
  .map((r) => ({ id: r.execId, calls: CALLS.filter((c) => c.teamExecId === r.execId).length }))
  .sort((a, b) => b.calls - a.calls)[0]?.id as string;
/** Every team by key (owner and name: two owners have a team of one name), and an unknown one. */
const TEAM_KEYS = [...TEAMS.map((t) => teamKey(t.owner, t.name)), teamKey('OPS', 'NO_SUCH_TEAM')];
/** The demo's teams and runs by team key, as the batched methods' expectations look them up. */
const TEAM_BY_KEY = new Map(TEAMS.map((t) => [teamKey(t.owner, t.name), t]));
const RUNS_BY_TEAM = new Map<string, TeamRun[]>();
for (const run of RUNS) {
  const key = teamKey(run.owner, run.teamName);
  RUNS_BY_TEAM.set(key, [...(RUNS_BY_TEAM.get(key) ?? []), run]);
}
const runsOfTeam = (key: string): TeamRun[] => RUNS_BY_TEAM.get(key) ?? [];
/** The start of a run: filters at exactly that instant show which side includes it. */
const MIDDLE_RUN = sortRuns(RUNS, NEWEST_FIRST)[Math.floor(RUNS.length / 2)] as TeamRun;
const MIDDLE = MIDDLE_RUN.startDate as Date;
const DAY = 24 * 3600 * 1000;
/** A keyset window that holds every row of the fixture. */
const ALL = { backward: false, limit: 1000 } as const;
const nodes = <T>(page: Page<Positioned<T>>): T[] => page.items.map((item) => item.node);

const RUN_COLUMNS = everyColumn('TeamRun');
const CALL_COLUMNS = everyColumn('ToolCall');
/** Runs with their tasks (each with its agent) and tool calls: the dashboard's tree. */
const RUNS_WITH_TREE = everyColumn('TeamRun', [
  [
    'tasks',
    {
      kind: 'relation',
      relation: RELATIONS.runTasks,
      plan: everyColumn('TaskRun', [
        ['agent', { kind: 'relation', relation: RELATIONS.taskAgent, plan: everyColumn('Agent') }],
      ]),
    },
  ],
  ['toolCalls', { kind: 'relation', relation: RELATIONS.runToolCalls, plan: CALL_COLUMNS }],
]);
/** A planned row without the children its plan set on it (PLANNED), to compare with a row. */
const plain = <T extends object>(row: T): T => Object.fromEntries(Object.entries(row)) as T;
const childList = (row: object, key: string) => (plannedChild(row, key) ?? []) as object[];

/** Team stats, field by field; the computed figures to 6 decimals. */
function expectStats(actual: readonly TeamStats[], expected: readonly TeamStats[]): void {
  expect(actual.map((s) => s.teamName)).toEqual(expected.map((s) => s.teamName));
  expected.forEach((want, i) => {
    const got = actual[i] as unknown as Record<string, unknown>;
    for (const [field, value] of Object.entries(want)) {
      const label = `${want.teamName}.${field}`;
      if (typeof value === 'number' && typeof got[field] === 'number') {
        expect(got[field], label).toBeCloseTo(value, 6);
      } else {
        expect(got[field], label).toEqual(value);
      }
    }
  });
}

for (const target of TARGETS) {
  const title = `team repository contract on ${target.name}${target.skipReason ? ` (${target.skipReason})` : ''}`;
  describe.skipIf(target.skipReason !== undefined)(title, () => {
    const contract = useContractTarget(target);
    const { catalogs, counted } = contract;
    const AUDIENCES = audiences(target.sessionUser);
    const ADMIN = AUDIENCES[0] as Audience;

    const teams = (a: Audience) => new TeamRepository(contract.driver, catalogs[a.scope], a.viewer);
    const history = (a: Audience) =>
      new TeamHistoryRepository(contract.driver, catalogs[a.scope], a.viewer);
    const agents = (a: Audience) =>
      new AgentRepository(contract.driver, catalogs[a.scope], a.viewer);
    /** The statements an audience's call issues: none when it sees nothing. */
    const sql = (a: Audience, ...names: string[]) => (a.blind ? [] : names);
    /** An owner filter that USER_ views cannot satisfy is answered without SQL. */
    const ownerUnreachable = (a: Audience, owner: string | null | undefined) =>
      a.scope === 'user' && !!owner && owner !== target.sessionUser;
    /** A page statement, plus the count statement when the page comes back empty. */
    const pageSql = (a: Audience, name: string, empty: boolean, owner?: string | null) =>
      ownerUnreachable(a, owner) ? [] : sql(a, `${name}.page`, ...(empty ? [`${name}.count`] : []));
    /** A planned statement (src/db/sql/history-plan.ts): its rows and their total in one. */
    const plannedSql = (a: Audience, name: string, owner?: string | null) =>
      ownerUnreachable(a, owner) ? [] : sql(a, name);

    test('the audiences see what the views hold', () => {
      const counts = AUDIENCES.map((a) => visible(a).runs.length);
      expect(counts[0]).toBe(RUNS.length);
      expect(counts[1]).toBeGreaterThan(0);
      expect(counts[1]).toBeLessThan(RUNS.length);
      expect(counts[2]).toBeGreaterThan(0);
      expect(counts[3]).toBe(counts[2]);
      expect(counts[4]).toBe(0);
    });

    describe('TeamRepository', () => {
      test.each(AUDIENCES)('page: every team once, by name, with the total ($label)', async (a) => {
        const expected = sortTeams(visible(a).teams);
        const listed: Team[] = [];
        for (let offset = 0; offset < expected.length; offset += 4) {
          const [page, issued] = await counted(() => teams(a).page({}, offset, 4));
          expect(page.totalCount).toBe(expected.length);
          expect(issued).toEqual(['teams.page']);
          listed.push(...page.items);
        }
        expect(listed).toEqual(expected);
        // Past the end, the total costs a count statement.
        const [past, issued] = await counted(() => teams(a).page({}, expected.length, 4));
        expect(past).toEqual({ items: [], totalCount: expected.length });
        expect(issued).toEqual(sql(a, 'teams.page', 'teams.count'));
      });

      test.each(AUDIENCES)(
        'page: nameContains is a case-insensitive part of the name, LIKE wildcards literal ($label)',
        async (a) => {
          const like = (text: string) =>
            new RegExp(
              text.toUpperCase().replace(/[%_]/g, (c) => (c === '%' ? '.*' : '.')),
              'u',
            );
          for (const text of ['order', 'r_s', '%', 'Y%_T', '\\']) {
            const contains = (t: Team) => t.name.toUpperCase().includes(text.toUpperCase());
            if (/[%_]/.test(text)) {
              // Read as LIKE wildcards, the text would select other teams: the case can fail.
              expect(TEAMS.filter((t) => like(text).test(t.name))).not.toEqual(
                TEAMS.filter(contains),
              );
            }
            const expected = sortTeams(visible(a).teams.filter(contains));
            const [page, issued] = await counted(() =>
              teams(a).page({ nameContains: text }, 0, 100),
            );
            expect(page.items, text).toEqual(expected);
            expect(page.totalCount, text).toBe(expected.length);
            expect(issued, text).toEqual(pageSql(a, 'teams', expected.length === 0));
            if (a === ADMIN && /^\w+$/.test(text)) expect(expected.length).toBeGreaterThan(0);
          }
        },
      );

      test.each(AUDIENCES)(
        'page: owner filter, alone and with nameContains ($label)',
        async (a) => {
          const filters = [
            ...OWNERS.map((owner) => ({ owner })),
            { owner: 'ANALYST', nameContains: 'ins' },
          ];
          for (const filter of filters) {
            const expected = sortTeams(
              visible(a).teams.filter(
                (t) =>
                  t.owner === filter.owner &&
                  (!('nameContains' in filter) ||
                    t.name.includes(filter.nameContains.toUpperCase())),
              ),
            );
            const [page, issued] = await counted(() => teams(a).page(filter, 0, 100));
            expect(page, JSON.stringify(filter)).toEqual({
              items: expected,
              totalCount: expected.length,
            });
            expect(issued).toEqual(pageSql(a, 'teams', expected.length === 0, filter.owner));
          }
        },
      );

      test.each(AUDIENCES)(
        'byKeys: bare names in the order asked, the first by owner, null where unknown or not visible ($label)',
        async (a) => {
          const names = [
            'ORDER_SUPPORT_TEAM',
            'NO_SUCH_TEAM',
            'SALES_INSIGHT_TEAM',
            'INCIDENT_RESPONSE_TEAM',
            'ORDER_SUPPORT_TEAM',
          ];
          const [found, issued] = await counted(() => teams(a).byKeys(names));
          expect(found).toEqual(
            names.map((name) => visible(a).teams.find((t) => t.name === name) ?? null),
          );
          expect(issued).toEqual(sql(a, 'teams.byNames'));
        },
      );

      test('toolsOf: a team’s tools come through its members’ tasks (seed 001 values)', async () => {
        const [tools] = await teams(ADMIN).toolsOf(['ORDER_SUPPORT_TEAM']);
        expect(tools?.map((t) => [t.agentName, t.taskName, t.name, t.toolType])).toEqual([
          ['ORDER_ASSISTANT', 'ANSWER_ORDER_QUESTION', 'ORDER_LOOKUP', 'SQL'],
          ['REFUND_CHECKER', 'PROCESS_REFUND', 'REFUND_APPROVAL', 'HUMAN'],
          ['REFUND_CHECKER', 'PROCESS_REFUND', 'NOTIFY_CUSTOMER', 'NOTIFICATION'],
        ]);
        expect(tools?.[1]).toEqual({
          teamName: 'ORDER_SUPPORT_TEAM',
          teamOwner: 'APP_USER',
          toolId: expect.stringMatching(/^\d+$/),
          name: 'REFUND_APPROVAL',
          owner: 'APP_USER',
          instruction: 'Ask a supervisor to approve refunds above 100 USD',
          toolType: 'HUMAN',
          agentName: 'REFUND_CHECKER',
          taskName: 'PROCESS_REFUND',
        });
        const ids = (tools ?? []).map((t) => t.toolId);
        expect(new Set(ids).size).toBe(3);
      });

      test.each(AUDIENCES)(
        'toolsOf: every team’s tools with instruction, type and id, in one statement ($label)',
        async (a) => {
          const [tools, issued] = await counted(() => teams(a).toolsOf(TEAM_KEYS));
          expect(tools).toEqual(
            TEAM_KEYS.map((key) => {
              const team = visible(a).teams.find((t) => teamKey(t.owner, t.name) === key);
              return team ? teamTools(team) : [];
            }),
          );
          expect(issued).toEqual(sql(a, 'teams.tools'));
        },
      );

      test.each(AUDIENCES)(
        'statsOf: runs by state, success rate, duration p50/p95 and human waits agree with the runs ($label)',
        async (a) => {
          const { runs, calls } = visible(a);
          const [stats, issued] = await counted(() => teams(a).statsOf(TEAM_KEYS));
          expectStats(
            stats,
            TEAM_KEYS.map((key) => {
              const { owner, name } = teamRefOf(key);
              return teamStats(owner ?? '', name, runs, calls);
            }),
          );
          expect(issued).toEqual(sql(a, 'teams.stats'));
          if (a === ADMIN) {
            // Both kinds of team are present: the human-wait figures are really checked.
            expect(stats.some((s) => s.humanWaitCount > 0)).toBe(true);
            expect(stats.some((s) => s.runCount > 0 && s.humanWaitCount === 0)).toBe(true);
          }
        },
      );
    });

    describe('TeamHistoryRepository', () => {
      test.each(AUDIENCES)('page: every order field, both directions ($label)', async (a) => {
        const { runs } = visible(a);
        for (const field of ['START_DATE', 'END_DATE', 'TEAM_NAME', 'STATE'] as const) {
          for (const direction of ['ASC', 'DESC'] as const) {
            const order = { field, direction };
            const first = await history(a).plannedRunsPage(
              {},
              order,
              { backward: false, limit: 30 },
              RUN_COLUMNS,
            );
            const after = first.items.at(-1)?.position;
            const [page, issued] = await counted(() =>
              history(a).plannedRunsPage(
                {},
                order,
                { after, backward: false, limit: 40 },
                RUN_COLUMNS,
              ),
            );
            const expected = sortRuns(runs, order).slice(30, 70);
            expect(nodes(page), `${field} ${direction}`).toEqual(expected);
            expect(page.totalCount).toBe(runs.length);
            expect(issued).toEqual(plannedSql(a, 'history.runsPage'));
          }
        }
      });

      const RUN_FILTERS: [string, TeamRunFilter][] = [
        ['a team', { teamName: 'ORDER_SUPPORT_TEAM' }],
        ['another owner’s team', { teamName: 'SALES_INSIGHT_TEAM' }],
        ['two states', { states: ['WAITING_FOR_HUMAN', 'RESUMING'] }],
        ['a state twice', { states: ['FAILED', 'FAILED'] }],
        ['started at or after', { startedAfter: MIDDLE }],
        ['started before', { startedBefore: MIDDLE }],
        [
          'a start window',
          { startedAfter: new Date(MIDDLE.getTime() - 5 * DAY), startedBefore: MIDDLE },
        ],
        ...OWNERS.map((owner): [string, TeamRunFilter] => [`owner ${owner}`, { owner }]),
        [
          'all together',
          {
            teamName: 'ORDER_SUPPORT_TEAM',
            states: ['SUCCEEDED', 'FAILED'],
            startedAfter: new Date(MIDDLE.getTime() - 20 * DAY),
            startedBefore: new Date(MIDDLE.getTime() + 20 * DAY),
            owner: 'APP_USER',
          },
        ],
      ];

      test.each(AUDIENCES)('page: each filter, alone and together ($label)', async (a) => {
        for (const [name, filter] of RUN_FILTERS) {
          const expected = sortRuns(
            visible(a).runs.filter((r) => matchesRun(r, filter)),
            NEWEST_FIRST,
          );
          if (a === ADMIN) expect(expected.length, name).toBeGreaterThan(0);
          const [page, issued] = await counted(() =>
            history(a).plannedRunsPage(filter, NEWEST_FIRST, ALL, RUN_COLUMNS),
          );
          expect(nodes(page), name).toEqual(expected);
          expect(page.totalCount, name).toBe(expected.length);
          expect(issued, name).toEqual(plannedSql(a, 'history.runsPage', filter.owner));
        }
      });

      test('page: startedAfter includes a run that started at that instant, startedBefore excludes it', async () => {
        const page = (filter: TeamRunFilter) =>
          history(ADMIN).plannedRunsPage(filter, NEWEST_FIRST, ALL, RUN_COLUMNS);
        const after = await page({ startedAfter: MIDDLE });
        const before = await page({ startedBefore: MIDDLE });
        expect(nodes(after).map((r) => r.execId)).toContain(MIDDLE_RUN.execId);
        expect(nodes(before).map((r) => r.execId)).not.toContain(MIDDLE_RUN.execId);
        expect(after.totalCount + before.totalCount).toBe(RUNS.length);
      });

      test.each(AUDIENCES)(
        'plannedRunPages: each team’s newest runs, the window applied per team, in the keys’ order ($label)',
        async (a) => {
          // Both owners' SALES_INSIGHT_TEAM: each its own window and total.
          const keys = [
            'ORDER_SUPPORT_TEAM',
            'NO_SUCH_TEAM',
            'SALES_INSIGHT_TEAM',
            'INCIDENT_RESPONSE_TEAM',
            'DOC_QA_TEAM',
            'ORDER_SUPPORT_TEAM',
          ].flatMap((name) => {
            const owners = TEAMS.filter((t) => t.name === name).map((t) => t.owner);
            return (owners.length > 0 ? owners : ['APP_USER']).map((owner) => teamKey(owner, name));
          });
          const cases: [TeamRunFilter, number, number][] = [
            [{}, 0, 3],
            [{}, 2, 4],
            [{}, 12, 5], // past the last run of the teams with 12 runs or fewer
            [{ states: ['SUCCEEDED', 'FAILED'], startedBefore: MIDDLE }, 1, 3],
            [{ owner: 'APP_USER' }, 0, 2],
            [{ owner: 'OPS' }, 0, 2],
          ];
          for (const [filter, offset, limit] of cases) {
            const label = JSON.stringify([filter, offset, limit]);
            const all = keys.map((key) => {
              const { owner, name } = teamRefOf(key);
              return sortRuns(
                visible(a).runs.filter(
                  (r) => r.owner === owner && r.teamName === name && matchesRun(r, filter),
                ),
                NEWEST_FIRST,
              );
            });
            const [pages, issued] = await counted(() =>
              history(a).plannedRunPages(keys, filter, offset, limit, RUN_COLUMNS),
            );
            expect(
              pages.map((p) => p.items),
              label,
            ).toEqual(all.map((runs) => runs.slice(offset, offset + limit)));
            // Every team with runs reports its total, a window past its last run included.
            expect(
              pages.map((p) => p.totalCount),
              label,
            ).toEqual(all.map((runs) => runs.length));
            expect(issued, label).toEqual(plannedSql(a, 'history.runsOfTeams', filter.owner));
            // The same windows with their runs' tasks (each with its agent) and tool calls, in
            // one statement.
            const [nested, nestedIssued] = await counted(() =>
              history(a).plannedRunPages(keys, filter, offset, limit, RUNS_WITH_TREE),
            );
            expect(
              nested.map((p) => ({ ...p, items: p.items.map(plain) })),
              label,
            ).toEqual(pages);
            const tasks: object[] = [];
            for (const run of nested.flatMap((p) => p.items)) {
              const own = childList(run, 'tasks');
              tasks.push(...own);
              expect(own.map(plain), label).toEqual(tasksOfRun(visible(a).tasks, run.execId));
              expect(childList(run, 'toolCalls'), label).toEqual(
                callsOfRun(visible(a).calls, run.execId),
              );
            }
            expect(nestedIssued, label).toEqual(plannedSql(a, 'history.runsOfTeams', filter.owner));
            // Each task's agent as agents.byNames reads it without DESCRIBE_AGENT, null where none.
            const byName = [
              ...new Set(tasks.map((task) => (task as { agentName: string }).agentName)),
            ];
            if (byName.length > 0) {
              const expected = await agents(a).byNames(byName, false);
              for (const task of tasks) {
                const agent = expected[byName.indexOf((task as { agentName: string }).agentName)];
                expect(plannedChild(task, 'agent'), label).toEqual(agent);
              }
            }
          }
        },
      );

      test.each(AUDIENCES)(
        'runsByIds: in the order asked, null where unknown or not visible ($label)',
        async (a) => {
          const ids = [...RUN_IDS, RUN_IDS[0] as string];
          const [found, issued] = await counted(() => history(a).runsByIds(ids));
          expect(found).toEqual(
            ids.map((id) => visible(a).runs.find((r) => r.execId === id) ?? null),
          );
          expect(issued).toEqual(sql(a, 'teamRuns.byIds'));
        },
      );

      test.each(AUDIENCES)(
        'plannedWaiting: each team’s paused runs, oldest first ($label)',
        async (a) => {
          const [waiting, issued] = await counted(() =>
            history(a).plannedWaiting(TEAM_KEYS, RUN_COLUMNS),
          );
          const expected = TEAM_KEYS.map((key) =>
            sortRuns(
              visible(a).runs.filter(
                (r) => teamKey(r.owner, r.teamName) === key && r.state === 'WAITING_FOR_HUMAN',
              ),
              { field: 'START_DATE', direction: 'ASC' },
            ),
          );
          expect(waiting).toEqual(expected);
          // Some team has several paused runs, so their order is checked too.
          if (a === ADMIN) expect(expected.some((runs) => runs.length > 1)).toBe(true);
          expect(issued).toEqual(sql(a, 'history.waitingOfTeams'));
        },
      );

      const ALL_RUN_IDS = [...RUNS.map((r) => r.execId), 'NO_SUCH_RUN'];

      test.each(AUDIENCES)(
        'tasksOf: each run’s tasks in task order, with the conversation id of their JSON ($label)',
        async (a) => {
          const [tasks, issued] = await counted(() => history(a).tasksOf(ALL_RUN_IDS));
          expect(tasks).toEqual(ALL_RUN_IDS.map((id) => tasksOfRun(visible(a).tasks, id)));
          expect(issued).toEqual(sql(a, 'taskRuns.byRuns'));
          for (const task of tasks.flat()) {
            expect(task.conversationId).toMatch(
              /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
            );
            expect(task.conversationId).toBe(
              (task.conversationParams as { conversation_id: string }).conversation_id,
            );
          }
        },
      );

      test.each(AUDIENCES)(
        'toolCallsOf: each run’s calls by task order, then start ($label)',
        async (a) => {
          const [calls, issued] = await counted(() => history(a).toolCallsOf(ALL_RUN_IDS));
          expect(calls).toEqual(ALL_RUN_IDS.map((id) => callsOfRun(visible(a).calls, id)));
          expect(issued).toEqual(sql(a, 'toolCalls.byRuns'));
        },
      );

      test.each(AUDIENCES)(
        'toolCallsByIds: in the order asked, null where unknown or not visible ($label)',
        async (a) => {
          const ids = [...CALL_IDS, CALL_IDS[1] as string];
          const [found, issued] = await counted(() => history(a).toolCallsByIds(ids));
          expect(found).toEqual(
            ids.map((id) => visible(a).calls.find((c) => c.invocationId === id) ?? null),
          );
          expect(issued).toEqual(sql(a, 'toolCalls.byIds'));
        },
      );

      const CALL_FILTERS: ToolCallFilter[] = [
        {},
        { toolName: 'REFUND_APPROVAL' },
        { agentName: 'SALES_ANALYST' },
        { teamExecId: BUSY_RUN },
        { toolName: 'ORDER_LOOKUP', agentName: 'ORDER_ASSISTANT' },
        { toolName: 'ORDER_LOOKUP', agentName: 'REFUND_CHECKER' },
      ];

      test.each(AUDIENCES)('plannedCallsPage: each filter, newest first ($label)', async (a) => {
        for (const filter of CALL_FILTERS) {
          const all = callPage(visible(a).calls, filter);
          const expected = all.slice(2, 22);
          const first = await history(a).plannedCallsPage(
            filter,
            { backward: false, limit: 2 },
            CALL_COLUMNS,
          );
          const after = first.items.at(-1)?.position;
          const [page, issued] = await counted(() =>
            history(a).plannedCallsPage(
              filter,
              { after, backward: false, limit: 20 },
              CALL_COLUMNS,
            ),
          );
          expect(nodes(page), JSON.stringify(filter)).toEqual(expected);
          expect(page.totalCount).toBe(all.length);
          expect(issued).toEqual(plannedSql(a, 'history.callsPage'));
        }
      });
    });

    describe('statement counts', () => {
      test.each(AUDIENCES)(
        'the dashboard shape costs one statement per level, whatever the page sizes ($label)',
        async (a) => {
          for (const [teamCount, runCount] of [
            [2, 1],
            [5, 3],
            [100, 100],
          ] as const) {
            const [shown, issued] = await counted(async () => {
              const page = await teams(a).page({}, 0, teamCount);
              const keys = page.items.map((t) => teamKey(t.owner, t.name));
              const [tools, runPages] = await Promise.all([
                teams(a).toolsOf(keys),
                history(a).plannedRunPages(keys, {}, 0, runCount, RUN_COLUMNS),
              ]);
              const ids = runPages.flatMap((p) => p.items.map((r) => r.execId));
              const tasks = await history(a).tasksOf(ids);
              const calls = await history(a).toolCallsOf(ids);
              return [keys, tools.flat(), ids, tasks.flat(), calls.flat()].map((l) => l.length);
            });
            const { runs, tasks, calls } = visible(a);
            const shownTeams = sortTeams(visible(a).teams).slice(0, teamCount);
            const shownRuns = shownTeams.flatMap((t) =>
              sortRuns(
                runs.filter((r) => r.owner === t.owner && r.teamName === t.name),
                NEWEST_FIRST,
              ).slice(0, runCount),
            );
            const ids = new Set(shownRuns.map((r) => r.execId));
            expect(shown, `${teamCount} teams × ${runCount} runs`).toEqual([
              shownTeams.length,
              shownTeams.flatMap(teamTools).length,
              shownRuns.length,
              tasks.filter((t) => ids.has(t.teamExecId)).length,
              calls.filter((c) => ids.has(c.teamExecId)).length,
            ]);
            expect(issued.sort()).toEqual(
              sql(
                a,
                'history.runsOfTeams',
                'taskRuns.byRuns',
                'teams.page',
                'teams.tools',
                'toolCalls.byRuns',
              ),
            );
          }
        },
      );

      test('an empty list of keys costs no statement', async () => {
        const [results, issued] = await counted(() =>
          Promise.all([
            teams(ADMIN).byKeys([]),
            teams(ADMIN).toolsOf([]),
            teams(ADMIN).statsOf([]),
            history(ADMIN).plannedRunPages([], {}, 0, 10, RUNS_WITH_TREE),
            history(ADMIN).runsByIds([]),
            history(ADMIN).plannedWaiting([], RUN_COLUMNS),
            history(ADMIN).tasksOf([]),
            history(ADMIN).toolCallsOf([]),
            history(ADMIN).toolCallsByIds([]),
          ]),
        );
        expect(results).toEqual(results.map(() => []));
        expect(issued).toEqual([]);
      });

      /** Each batched method, the statement it issues, its real keys and what it finds for a key. */
      const BATCHED: {
        method: string;
        statement: string;
        keys: readonly string[];
        run(keys: string[]): Promise<unknown[]>;
        expected(key: string): unknown;
      }[] = [
        {
          method: 'TeamRepository.byKeys',
          statement: 'teams.byNames',
          keys: TEAMS.map((t) => teamKey(t.owner, t.name)),
          run: (keys) => teams(ADMIN).byKeys(keys),
          expected: (key) => TEAM_BY_KEY.get(key) ?? null,
        },
        {
          method: 'TeamRepository.toolsOf',
          statement: 'teams.tools',
          keys: TEAMS.map((t) => teamKey(t.owner, t.name)),
          run: (keys) => teams(ADMIN).toolsOf(keys),
          expected: (key) => {
            const team = TEAM_BY_KEY.get(key);
            return team ? teamTools(team) : [];
          },
        },
        {
          method: 'TeamRepository.statsOf',
          statement: 'teams.stats',
          keys: TEAMS.map((t) => teamKey(t.owner, t.name)),
          run: async (keys) => (await teams(ADMIN).statsOf(keys)).map((s) => s.runCount),
          expected: (key) => runsOfTeam(key).length,
        },
        {
          method: 'TeamHistoryRepository.plannedRunPages',
          statement: 'history.runsOfTeams',
          keys: TEAMS.map((t) => teamKey(t.owner, t.name)),
          run: async (keys) =>
            (await history(ADMIN).plannedRunPages(keys, {}, 0, 2, RUN_COLUMNS)).map((p) => p.items),
          expected: (key) => sortRuns(runsOfTeam(key), NEWEST_FIRST).slice(0, 2),
        },
        {
          method: 'TeamHistoryRepository.plannedRunPages with tasks and tool calls',
          statement: 'history.runsOfTeams',
          keys: TEAMS.map((t) => teamKey(t.owner, t.name)),
          run: async (keys) =>
            (await history(ADMIN).plannedRunPages(keys, {}, 0, 2, RUNS_WITH_TREE)).map((p) =>
              p.items.map((run) => [
                run.execId,
                childList(run, 'tasks').length,
                childList(run, 'toolCalls').length,
              ]),
            ),
          expected: (key) =>
            sortRuns(runsOfTeam(key), NEWEST_FIRST)
              .slice(0, 2)
              .map((run) => [
                run.execId,
                tasksOfRun(TASKS, run.execId).length,
                callsOfRun(CALLS, run.execId).length,
              ]),
        },
        {
          method: 'TeamHistoryRepository.plannedWaiting',
          statement: 'history.waitingOfTeams',
          keys: TEAMS.map((t) => teamKey(t.owner, t.name)),
          run: (keys) => history(ADMIN).plannedWaiting(keys, RUN_COLUMNS),
          expected: (key) =>
            sortRuns(
              runsOfTeam(key).filter((r) => r.state === 'WAITING_FOR_HUMAN'),
              { field: 'START_DATE', direction: 'ASC' },
            ),
        },
        {
          method: 'TeamHistoryRepository.runsByIds',
          statement: 'teamRuns.byIds',
          keys: RUNS.map((r) => r.execId),
          run: (keys) => history(ADMIN).runsByIds(keys),
          expected: (key) => RUNS.find((r) => r.execId === key) ?? null,
        },
        {
          method: 'TeamHistoryRepository.tasksOf',
          statement: 'taskRuns.byRuns',
          keys: RUNS.map((r) => r.execId),
          run: (keys) => history(ADMIN).tasksOf(keys),
          expected: (key) => tasksOfRun(TASKS, key),
        },
        {
          method: 'TeamHistoryRepository.toolCallsOf',
          statement: 'toolCalls.byRuns',
          keys: RUNS.map((r) => r.execId),
          run: (keys) => history(ADMIN).toolCallsOf(keys),
          expected: (key) => callsOfRun(CALLS, key),
        },
        {
          method: 'TeamHistoryRepository.toolCallsByIds',
          statement: 'toolCalls.byIds',
          keys: CALLS.map((c) => c.invocationId),
          run: (keys) => history(ADMIN).toolCallsByIds(keys),
          expected: (key) => CALLS.find((c) => c.invocationId === key) ?? null,
        },
      ];

      test.each(BATCHED)(
        '$method: over 1,000 keys, ceil(n/1000) statements, nothing lost or doubled',
        async ({ statement, keys, run, expected }) => {
          // What a key finds, computed once per key (most keys are asked in several rounds).
          const found = new Map<string, unknown>();
          const expectedOf = (key: string) => {
            if (!found.has(key)) found.set(key, expected(key));
            return found.get(key);
          };
          // [keys asked, distinct keys]: the split counts distinct keys only.
          for (const [size, distinct] of [
            [1000, 1000],
            [1001, 1001],
            [2500, 2500],
            [2500, 1200],
          ] as const) {
            const unique = Array.from({ length: distinct }, (_, i) => `NO_SUCH_KEY_${i}`);
            // Real keys first, last (the value the last IN list is padded with) and either side
            // of each 1,000-key boundary.
            [0, 999, 1000, 1999, 2000, distinct - 1]
              .filter((i) => i < distinct)
              .forEach((position, k) => {
                unique[position] = keys[k % keys.length] as string;
              });
            const asked = Array.from({ length: size }, (_, i) => unique[i % distinct] as string);
            const [answered, issued] = await counted(() => run(asked));
            expect(issued, `${size} keys, ${distinct} distinct`).toEqual(
              Array.from({ length: Math.ceil(distinct / 1000) }, () => statement),
            );
            expect(answered).toEqual(asked.map(expectedOf));
          }
        },
      );
    });
  });
}
