import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mintToken } from '../src/auth/token.js';
import type { EmbeddedPg } from '../src/db/embedded/database.js';
import { MAX_ACTIVITY_BUCKETS } from '../src/model/activity.js';
import { embeddedPg } from './live/support.js';
import { startTestServer, type TestServer } from './support/server.js';

const SECRET = 'a-team-activity-test-secret-long-enough!';
const REPORT = 'REPORT_SUMMARY_AGENT_TEAM';
/** A team of APP_USER's whose runs this file writes, in 2020, far from the demo's. */
const EDGES = 'ACTIVITY_EDGE_TEAM';

let t: TestServer;
let secured: TestServer;
let pg: EmbeddedPg;

interface Bucket {
  start: string;
  end: string;
  startedCount: number;
  startedByState: { state: string; count: number }[];
  endedCount: number;
  durationP50Ms: number | null;
  durationP95Ms: number | null;
  waitingAtEnd: number | null;
  waitsBegun: number | null;
  humanWaitCount: number | null;
  humanWaitMs: number | null;
}
interface Activity {
  teamRunActivity: { bucket: string; from: string; to: string; buckets: Bucket[] } | null;
}

const ACTIVITY = `query($bucket: ActivityBucket!, $from: DateTime, $to: DateTime, $filter: TeamRunActivityFilter) {
  teamRunActivity(bucket: $bucket, from: $from, to: $to, filter: $filter) {
    bucket from to
    buckets { start end startedCount startedByState { state count } endedCount durationP50Ms durationP95Ms
              waitingAtEnd waitsBegun humanWaitCount humanWaitMs }
  }
}`;

const at = (time: string) => `2020-01-01T${time}Z`;
const MIN = 60_000;

async function addRun(id: string, state: string, start: string, end: string | null) {
  await pg.query(
    `INSERT INTO dba_ai_agent_team_history (team_exec_id, team_name, team_owner, start_date, end_date, state, team_instance_id)
     VALUES ($1, $2, 'APP_USER', $3, $4, $5, 1)`,
    [id, EDGES, start, end, state],
  );
}

/** A call of APP_USER's HUMAN tool HUMAN_REVIEW (tool_type HUMAN in the tool attributes). */
async function addHumanCall(id: string, run: string, start: string, end: string | null) {
  await pg.query(
    `INSERT INTO dba_ai_agent_tool_history (invocation_id, team_exec_id, task_order, tool_owner, tool_name, start_date, end_date)
     VALUES ($1, $2, 1, 'APP_USER', 'HUMAN_REVIEW', $3, $4)`,
    [id, run, start, end],
  );
}

beforeAll(async () => {
  [t, secured] = await Promise.all([
    startTestServer(),
    startTestServer({ AUTH_JWT_SECRET: SECRET }),
  ]);
  pg = embeddedPg(t.server);
  // Before the window, waiting from 07:30 to 08:30, ended 08:45.
  await addRun('EDGE_RUN_0', 'SUCCEEDED', at('07:00:00'), at('08:45:00'));
  await addHumanCall('EDGE_CALL_0', 'EDGE_RUN_0', at('07:30:00'), at('08:30:00'));
  // Starts on the hour, waits from 09:10 to 09:40, ends at 09:50.
  await addRun('EDGE_RUN_1', 'SUCCEEDED', at('09:00:00'), at('09:50:00'));
  await addHumanCall('EDGE_CALL_1', 'EDGE_RUN_1', at('09:10:00'), at('09:40:00'));
  // The last millisecond of 09:00-10:00, ending on the first of 10:00-11:00.
  await addRun('EDGE_RUN_2', 'FAILED', at('09:59:59.999'), at('10:00:00.000'));
  // Waiting since 10:05, still.
  await addRun('EDGE_RUN_3', 'WAITING_FOR_HUMAN', at('10:00:00'), null);
  await addHumanCall('EDGE_CALL_3', 'EDGE_RUN_3', at('10:05:00'), null);
});
afterAll(() => Promise.all([t?.stop(), secured?.stop()]));

const started = (bucket: Bucket | undefined) =>
  Object.fromEntries(
    (bucket?.startedByState ?? []).filter((s) => s.count > 0).map((s) => [s.state, s.count]),
  );

describe('teamRunActivity', () => {
  test('puts each run and wait in the bucket its instant falls in, edges included', async () => {
    const { data, errors } = await t.gql<Activity>(ACTIVITY, {
      bucket: 'HOUR',
      from: at('08:00:00'),
      to: at('12:00:00'),
      filter: { teamName: EDGES },
    });
    expect(errors).toBeUndefined();
    const buckets = data?.teamRunActivity?.buckets ?? [];
    expect(buckets.map((b) => b.start)).toEqual(
      ['08', '09', '10', '11'].map((h) => new Date(at(`${h}:00:00`)).toISOString()),
    );
    expect(buckets.map((b) => b.end).slice(0, 3)).toEqual(buckets.map((b) => b.start).slice(1));
    const [eight, nine, ten, eleven] = buckets;
    // 08: the run from before the window ends (105 min); its wait, open at 08:00, is answered.
    expect(eight).toMatchObject({ startedCount: 0, endedCount: 1, durationP50Ms: 105 * MIN });
    expect(eight).toMatchObject({ waitsBegun: 0, humanWaitCount: 1, humanWaitMs: 60 * MIN });
    expect(eight?.waitingAtEnd).toBe(0);
    // 09: two starts, 09:00:00.000 and 09:59:59.999; one end; a wait begun and answered.
    expect(started(nine)).toEqual({ SUCCEEDED: 1, FAILED: 1 });
    expect(nine).toMatchObject({ endedCount: 1, durationP50Ms: 50 * MIN, durationP95Ms: 50 * MIN });
    expect(nine).toMatchObject({ waitsBegun: 1, humanWaitCount: 1, humanWaitMs: 30 * MIN });
    expect(nine?.waitingAtEnd).toBe(0);
    // 10: the run started at 10:00:00.000 waits; the one ended at 10:00:00.000 took 1 ms.
    expect(started(ten)).toEqual({ WAITING_FOR_HUMAN: 1 });
    expect(ten).toMatchObject({ endedCount: 1, durationP50Ms: 1, waitsBegun: 1, waitingAtEnd: 1 });
    expect(ten).toMatchObject({ humanWaitCount: 0, humanWaitMs: 0 });
    // 11: nothing happens, and the run still waits.
    expect(eleven).toMatchObject({ startedCount: 0, endedCount: 0, durationP50Ms: null });
    expect(eleven?.waitingAtEnd).toBe(1);

    const day = await t.gql<Activity>(ACTIVITY, {
      bucket: 'DAY',
      from: at('06:00:00'),
      to: at('12:00:00'),
      filter: { teamName: EDGES },
    });
    expect(day.data?.teamRunActivity?.buckets).toEqual([
      expect.objectContaining({
        start: '2020-01-01T00:00:00.000Z',
        end: '2020-01-02T00:00:00.000Z',
        startedCount: 4,
        endedCount: 3,
        waitsBegun: 3,
        humanWaitCount: 2,
        humanWaitMs: 90 * MIN,
        waitingAtEnd: 1,
      }),
    ]);
  });

  test('is one statement for any number of buckets, and agrees with teamRuns and team stats', async () => {
    const to = new Date();
    const from = new Date(to.getTime() - 24 * 3600 * 1000);
    let hours: Bucket[] = [];
    const statements = await t.countStatements(async () => {
      const { data, errors } = await t.gql<Activity>(ACTIVITY, {
        bucket: 'HOUR',
        from: from.toISOString(),
        to: to.toISOString(),
      });
      expect(errors).toBeUndefined();
      hours = data?.teamRunActivity?.buckets ?? [];
    });
    expect(statements).toBe(1);
    expect(hours).toHaveLength(25);
    // The demo history ends now: its last day has runs in most hours.
    expect(hours.filter((b) => b.startedCount > 0).length).toBeGreaterThan(12);
    const first = hours[0]?.start as string;
    const last = hours.at(-1)?.end as string;
    const runs = await t.gql<{ teamRuns: { totalCount: number } }>(
      `query($a: DateTime, $b: DateTime) { teamRuns(filter: { startedAfter: $a, startedBefore: $b }) { totalCount } }`,
      { a: first, b: last },
    );
    expect(hours.reduce((sum, b) => sum + b.startedCount, 0)).toBe(runs.data?.teamRuns.totalCount);

    const month = await t.countStatements(async () => {
      const { data } = await t.gql<Activity>(ACTIVITY, {
        bucket: 'DAY',
        from: new Date(to.getTime() - 40 * 24 * 3600 * 1000).toISOString(),
        filter: { teamName: REPORT },
      });
      const days = data?.teamRunActivity?.buckets ?? [];
      expect(days).toHaveLength(41);
      const stats = await t.gql<{
        team: { stats: { runCount: number; humanWaitCount: number; humanWaitTotalMs: number } };
      }>(`{ team(name: "${REPORT}") { stats { runCount humanWaitCount humanWaitTotalMs } } }`);
      const sum = (read: (b: Bucket) => number | null) =>
        days.reduce((total, b) => total + (read(b) ?? 0), 0);
      // The same runs and the same HUMAN calls as the team's statistics.
      expect(sum((b) => b.startedCount)).toBe(stats.data?.team.stats.runCount);
      expect(sum((b) => b.humanWaitCount)).toBe(stats.data?.team.stats.humanWaitCount);
      expect(sum((b) => b.humanWaitMs)).toBeCloseTo(
        stats.data?.team.stats.humanWaitTotalMs ?? -1,
        0,
      );
    });
    expect(month).toBe(3);
  });

  test('counts only the caller’s runs; an owner filter is for administrators', async () => {
    const as = async (user: string, roles: string[], source: string, variables = {}) => {
      const token = await mintToken(secured.server.config.auth, { user, roles, expiresIn: '5m' });
      return secured.post<Activity & { teamRuns?: { totalCount: number } }>(source, variables, {
        authorization: `Bearer ${token}`,
      });
    };
    const query = (user: string, variables: Record<string, unknown>) =>
      as(user, [], ACTIVITY, variables);
    const window = { bucket: 'DAY', from: new Date(Date.now() - 40 * 86_400_000).toISOString() };
    const total = (result: { data?: Activity | null }) =>
      (result.data?.teamRunActivity?.buckets ?? []).reduce((sum, b) => sum + b.startedCount, 0);
    const analyst = await query('ANALYST', window);
    expect(analyst.errors).toBeUndefined();
    const analystRuns = await as(
      'ADMIN',
      ['admin'],
      `{ teamRuns(filter: { owner: "ANALYST" }) { totalCount } }`,
    );
    expect(total(analyst)).toBe(analystRuns.data?.teamRuns?.totalCount);
    expect(total(analyst)).toBeGreaterThan(0);
    // A team of another owner's counts nothing for ANALYST.
    expect(total(await query('ANALYST', { ...window, filter: { teamName: REPORT } }))).toBe(0);
    const forbidden = await query('ANALYST', { ...window, filter: { owner: 'APP_USER' } });
    expect(forbidden.data?.teamRunActivity).toBeNull();
    expect(forbidden.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  test('refuses more than the bucket limit and a window that ends before it starts, sending nothing', async () => {
    const to = new Date('2026-06-01T00:00:00Z');
    const cases: [string, Record<string, unknown>, RegExp][] = [
      [
        'a month and a day of hours',
        { bucket: 'HOUR', from: new Date(to.getTime() - 32 * 86_400_000).toISOString() },
        new RegExp(`at most ${MAX_ACTIVITY_BUCKETS} buckets`),
      ],
      [
        'three years of days',
        { bucket: 'DAY', from: '2023-06-01T00:00:00Z' },
        /use DAY buckets or a shorter span/,
      ],
      ['from after to', { bucket: 'DAY', from: '2026-06-02T00:00:00Z' }, /earlier than "to"/],
      ['from equal to to', { bucket: 'HOUR', from: to.toISOString() }, /earlier than "to"/],
    ];
    for (const [label, variables, message] of cases) {
      let result: Awaited<ReturnType<typeof t.gql<Activity>>> | undefined;
      const statements = await t.countStatements(async () => {
        result = await t.gql<Activity>(ACTIVITY, { ...variables, to: to.toISOString() });
      });
      expect(statements, label).toBe(0);
      expect(result?.errors?.[0]?.extensions?.code, label).toBe('BAD_USER_INPUT');
      expect(result?.errors?.[0]?.message, label).toMatch(message);
    }
    // The limit itself is accepted.
    const limit = await t.gql<Activity>(ACTIVITY, {
      bucket: 'HOUR',
      from: new Date(to.getTime() - MAX_ACTIVITY_BUCKETS * 3_600_000).toISOString(),
      to: to.toISOString(),
    });
    expect(limit.errors).toBeUndefined();
    expect(limit.data?.teamRunActivity?.buckets).toHaveLength(MAX_ACTIVITY_BUCKETS);
  });

  test('costs its selection per bucket, known from the arguments: 15 aliases of 744 hourly buckets are over the cost limit, sending nothing', async () => {
    const to = '2026-06-01T00:00:00Z';
    const from = new Date(Date.parse(to) - MAX_ACTIVITY_BUCKETS * 3_600_000).toISOString();
    const aliased = (count: number) =>
      `{ ${Array.from(
        { length: count },
        (_, i) => `a${i}: teamRunActivity(bucket: HOUR, from: "${from}", to: "${to}") {
          buckets { start end startedCount startedByState { state count } endedCount durationP50Ms
                    durationP95Ms waitingAtEnd waitsBegun humanWaitCount humanWaitMs } }`,
      ).join('\n')} }`;
    let refused: Awaited<ReturnType<typeof t.gql>> | undefined;
    const statements = await t.countStatements(async () => {
      refused = await t.gql(aliased(15));
    });
    expect(statements).toBe(0);
    expect(refused?.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(refused?.errors?.[0]?.message).toMatch(/^Query cost \d+ exceeds the limit/);
    const one = await t.gql<{ a0: { buckets: unknown[] } }>(aliased(1));
    expect(one.errors).toBeUndefined();
    expect(one.data?.a0.buckets).toHaveLength(MAX_ACTIVITY_BUCKETS);
  });
});
