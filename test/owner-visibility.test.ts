import { beforeAll, describe, expect, test } from 'vitest';
import { setRunState } from '../src/db/embedded/simulator.js';
import { embeddedPg, type Recorder, subscribeSse } from './live/support.js';
import { startTestServer, type TestServer } from './support/server.js';
import { hs256Tokens } from './support/tokens.js';

/**
 * The owner rule has two forms (src/model/viewer.ts `visibleOwner`): a condition in SQL
 * (src/db/sql/owners.ts `viewerOwns`, what a query returns) and a filter in memory
 * (src/live/hub.ts through `ownerAdmits`, what a subscription receives). For each viewer and
 * each team, both must answer the same "does this viewer see that team's runs", with both
 * catalogs: DBA_ views (an owner column) and USER_ views (only the session user's rows).
 */

const SECRET = 'an-owner-rule-secret-that-is-long-enough!';
const tokens = hs256Tokens(SECRET);

/** The viewers, as their tokens' claims: NOBODY is a database user that owns no team. */
const VIEWERS: Record<string, Record<string, unknown>> = {
  admin: { roles: ['admin'] },
  APP_USER: { db_user: 'APP_USER' },
  ANALYST: { db_user: 'analyst' },
  OPS: { db_user: 'OPS' },
  NOBODY: { db_user: 'NOBODY' },
};

interface Sides {
  /** Every team with a waiting run, of every owner, as stored. */
  readonly teams: readonly { name: string; owner: string }[];
  /** Per viewer, the teams of the waiting runs its query returns (SQL). */
  readonly sql: Record<string, Set<string>>;
  /** Per viewer, the teams of the waiting runs its subscription receives (the hub). */
  readonly hub: Record<string, Set<string>>;
}

/** One server with this catalog, one unended run per team made WAITING_FOR_HUMAN. */
async function bothSides(viewScope: 'dba' | 'user'): Promise<Sides> {
  const t: TestServer = await startTestServer({
    AUTH_JWT_SECRET: SECRET,
    ORACLE_VIEW_SCOPE: viewScope,
  });
  try {
    // Before any subscription, so that the first poll (and so every first event) sees them.
    expect(t.server.live.active).toBe(false);
    const pg = embeddedPg(t.server);
    const { rows } = await pg.query<{ team_exec_id: string; team_name: string; owner: string }>(
      `SELECT DISTINCT ON (team_owner, team_name) team_exec_id, team_name, team_owner AS owner
       FROM dba_ai_agent_team_history WHERE end_date IS NULL
       ORDER BY team_owner, team_name, team_exec_id`,
    );
    for (const row of rows) await setRunState(pg, row.team_exec_id, 'WAITING_FOR_HUMAN');
    const teams = rows.map((row) => ({ name: row.team_name, owner: row.owner }));

    const sql: Record<string, Set<string>> = {};
    const hub: Record<string, Set<string>> = {};
    const streams: Recorder<{ teamsWaitingForHuman: { teamName: string }[] }>[] = [];
    try {
      for (const [viewer, claims] of Object.entries(VIEWERS)) {
        const headers = await tokens.bearer(claims);
        const answer = await t.post<{ teamRuns: { nodes: { teamName: string }[] } }>(
          '{ teamRuns(first: 100, filter: { states: [WAITING_FOR_HUMAN] }) { nodes { teamName } } }',
          {},
          headers,
        );
        expect(answer.errors, viewer).toBeUndefined();
        sql[viewer] = new Set(answer.data?.teamRuns.nodes.map((run) => run.teamName));
        const stream = await subscribeSse<{ teamsWaitingForHuman: { teamName: string }[] }>(
          t.url,
          'subscription { teamsWaitingForHuman { teamName } }',
          {},
          headers,
        );
        streams.push(stream);
        const [first] = await stream.take(1);
        hub[viewer] = new Set(first?.teamsWaitingForHuman.map((run) => run.teamName));
      }
    } finally {
      for (const stream of streams) stream.close();
    }
    return { teams, sql, hub };
  } finally {
    await t.stop();
  }
}

/** Each viewer × team on which the two forms disagree, said as a reader would. */
const disagreements = ({ teams, sql, hub }: Sides) =>
  Object.keys(VIEWERS).flatMap((viewer) =>
    teams.flatMap(({ name }) => {
      const [bySql, byHub] = [sql[viewer]?.has(name), hub[viewer]?.has(name)];
      if (bySql === byHub) return [];
      return [
        `${viewer} × ${name}: SQL ${bySql ? 'returns' : 'hides'} it, the hub ${byHub ? 'admits' : 'hides'} it`,
      ];
    }),
  );

const teamsOf = (sides: Sides, owners: readonly string[]) =>
  new Set(sides.teams.filter((team) => owners.includes(team.owner)).map((team) => team.name));

describe('the owner rule: what SQL returns and what the live hub admits are the same', () => {
  let dba: Sides;
  let user: Sides;
  beforeAll(async () => {
    [dba, user] = await Promise.all([bothSides('dba'), bothSides('user')]);
  });

  test('DBA_ views: admin sees every team, an owner its own, a user without teams none', () => {
    expect(new Set(dba.teams.map((team) => team.owner))).toEqual(
      new Set(['APP_USER', 'ANALYST', 'OPS']),
    );
    expect(disagreements(dba)).toEqual([]);
    // The rule is not trivially equal on both sides: each viewer sees a different set.
    expect(dba.sql.admin).toEqual(teamsOf(dba, ['APP_USER', 'ANALYST', 'OPS']));
    for (const owner of ['APP_USER', 'ANALYST', 'OPS']) {
      expect(dba.sql[owner], owner).toEqual(teamsOf(dba, [owner]));
      expect(dba.sql[owner]?.size, owner).toBeGreaterThan(0);
    }
    expect(dba.sql.NOBODY?.size).toBe(0);
  });

  test('USER_ views: only the session user’s teams exist, for admin and for that owner', () => {
    expect(disagreements(user)).toEqual([]);
    expect(user.sql.admin).toEqual(teamsOf(user, ['APP_USER']));
    expect(user.sql.APP_USER).toEqual(teamsOf(user, ['APP_USER']));
    expect(user.sql.APP_USER?.size).toBeGreaterThan(0);
    for (const other of ['ANALYST', 'OPS', 'NOBODY']) expect(user.sql[other]?.size, other).toBe(0);
  });
});
