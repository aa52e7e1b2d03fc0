/**
 * A page deep in teamRuns and toolCalls (after 250 rows, or KEYSET_DEPTH), read by OFFSET (as before keyset
 * cursors) and by keyset, on the embedded database: statement time, median of 50 after 10
 * warm-ups. `KEYSET_EXTRA_RUNS=20000` first adds that many runs (copies, new ids) to see how
 * each scales. Usage: `npx tsx bench/keyset-page.ts`.
 */
import { parseCommand } from '../src/command-line.js';
import type { Driver } from '../src/db/driver.js';
import type { PlanRoot } from '../src/db/sql/history-plan.js';
import type { Query } from '../src/db/sql/query.js';

parseCommand({
  name: 'npx tsx bench/keyset-page.ts',
  synopsis: '',
  about: `A page deep in teamRuns and toolCalls read by OFFSET and by keyset on the embedded
database: statement time, median of 50 after 10 warm-ups.`,
  environment: {
    KEYSET_DEPTH: 'rows before the page (default 250)',
    KEYSET_EXTRA_RUNS: 'runs to add first (copies with new ids), to see how each scales',
  },
});
// After the command line (src/command-line.ts says why).
const [
  { loadConfig },
  { discoverDatabase },
  { openEmbeddedDatabase },
  { sql },
  { historyPlanSql },
  { paged },
  { fetchRows },
  { everyColumn },
  { ANONYMOUS_ADMIN },
] = await Promise.all([
  import('../src/config.js'),
  import('../src/db/discover.js'),
  import('../src/db/embedded/database.js'),
  import('../src/db/sql/fragment.js'),
  import('../src/db/sql/history-plan.js'),
  import('../src/db/sql/pages.js'),
  import('../src/db/sql/query.js'),
  import('../src/model/plan.js'),
  import('../src/model/viewer.js'),
]);

const DEPTH = Number(process.env.KEYSET_DEPTH ?? 250);
const SIZE = 20;

async function median(driver: Driver, query: Query<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 60; i++) {
    const started = performance.now();
    await fetchRows(driver, query);
    if (i >= 10) times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1] as number;
}

const config = loadConfig({});
if (config.database.kind !== 'embedded') throw new Error('embedded only');
const database = await openEmbeddedDatabase(config.database);
const extra = Number(process.env.KEYSET_EXTRA_RUNS ?? 0);
if (extra > 0) {
  await database.pg.query(
    `INSERT INTO dba_ai_agent_team_history
     SELECT 'COPY_' || g || '_' || team_exec_id, team_name, team_owner,
       start_date - g * interval '1 second', end_date, state, team_instance_id
     FROM dba_ai_agent_team_history, generate_series(1, $1::int / 280 + 1) g`,
    [extra],
  );
}
const { catalog } = await discoverDatabase(database.driver, config.database.viewScope);
const plans = historyPlanSql(catalog);
const order = { field: 'START_DATE', direction: 'DESC' } as const;
/** A planned page reading every column of its rows and nothing below them (history-plan.ts). */
const planned = <T>(root: PlanRoot<T>) =>
  plans.planned(ANONYMOUS_ADMIN, root, everyColumn(root.type));

const [runsBefore] = await fetchRows(
  database.driver,
  planned(plans.runsPage(ANONYMOUS_ADMIN, {}, order, { backward: false, limit: DEPTH })),
);
const [callsBefore] = await fetchRows(
  database.driver,
  planned(plans.callsPage(ANONYMOUS_ADMIN, {}, { backward: false, limit: DEPTH })),
);
const window = { offset: DEPTH, limit: SIZE + 1 };
const cases: [string, Query<unknown>][] = [
  [
    'teamRuns offset',
    paged(
      'teamRuns.page',
      {
        select: sql`h.TEAM_EXEC_ID, h.TEAM_NAME, h.TEAM_OWNER, h.START_DATE, h.END_DATE, h.STATE`,
        from: sql`${sql.identifier(catalog, catalog.teamHistory)} h`,
        orderBy: sql`h.START_DATE DESC NULLS LAST, h.TEAM_EXEC_ID`,
        count: 'teamRuns.count',
      },
      window,
      (row) => row,
    ).page,
  ],
  [
    'teamRuns keyset',
    planned(
      plans.runsPage(ANONYMOUS_ADMIN, {}, order, {
        after: runsBefore?.rows.at(-1)?.position,
        backward: false,
        limit: SIZE + 1,
      }),
    ),
  ],
  [
    'toolCalls offset',
    paged(
      'toolCalls.page',
      {
        select: sql`INVOCATION_ID, TEAM_EXEC_ID, TASK_ORDER, TOOL_OWNER, TOOL_NAME, AGENT_NAME, TASK_NAME, START_DATE, END_DATE, INPUT, OUTPUT, TOOL_OUTPUT`,
        from: sql`${sql.identifier(catalog, catalog.toolHistory)} tc`,
        orderBy: sql`START_DATE DESC NULLS LAST, INVOCATION_ID`,
        count: 'toolCalls.count',
      },
      window,
      (row) => row,
    ).page,
  ],
  [
    'toolCalls keyset',
    planned(
      plans.callsPage(
        ANONYMOUS_ADMIN,
        {},
        {
          after: callsBefore?.rows.at(-1)?.position,
          backward: false,
          limit: SIZE + 1,
        },
      ),
    ),
  ],
];
const [runCount] = await fetchRows(
  database.driver,
  planned(plans.runsPage(ANONYMOUS_ADMIN, {}, order, { backward: false, limit: 1 })),
);
console.log(`runs: ${runCount?.total}; page of ${SIZE} after ${DEPTH} rows; median ms of 50`);
for (const [name, query] of cases) {
  console.log(`${name.padEnd(18)} ${(await median(database.driver, query)).toFixed(2)}`);
}
await database.driver.close();
