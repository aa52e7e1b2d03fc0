import type { Client } from 'graphql-ws';
import { describe, expect, test } from 'vitest';
import type { EmbeddedPg } from '../../src/db/embedded/database.js';
import { asUuid } from '../../src/db/embedded/demo-data.js';
import { setRunState } from '../../src/db/embedded/simulator.js';
import { actionForbidden } from '../../src/repositories/actions.js';
import { embeddedPg, metric, settled, subscribeWs } from '../live/support.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { hs256Tokens } from '../support/tokens.js';
import { INTERVAL, REPORT, stillWaiting, waitingRun, withHitlServer } from './support.js';

const SECRET = 'a-hitl-test-secret-that-is-long-enough!!';

let t: TestServer;
let pg: EmbeddedPg;
let ws: Client;
withHitlServer((server) => {
  ({ t, pg, ws } = server);
});

const RESPOND = `mutation($execId: ID!, $response: String!) {
  respondToHuman(execId: $execId, response: $response) {
    execId teamName conversationId submittedAt run { state }
  }
}`;

interface Submission {
  execId: string | null;
  teamName: string;
  conversationId: string | null;
  submittedAt: string;
  run: { state: string } | null;
}

const responses = (outcome: string) =>
  metric(t.server, 'agentgraph_human_responses_total', { outcome });

describe('respondToHuman', () => {
  test('the answer closes the HUMAN call, resumes the run, and subscribers see each step', async () => {
    const execId = await waitingRun(pg);
    const changes = subscribeWs<{
      teamRunChanged: {
        previousState: string;
        state: string;
        observedAt: string;
        run: { execId: string };
      };
    }>(
      ws,
      `subscription { teamRunChanged(filter: { teamName: "${REPORT}" }) {
        previousState state observedAt run { execId } } }`,
    );
    await settled(t.server, 1);
    const submittedBefore = await responses('submitted');

    const answer = 'Approved, but cite the Q3 figures';
    const sentAt = Date.now();
    const { status, data, errors } = await t.post<{ respondToHuman: Submission }>(RESPOND, {
      execId,
      response: answer,
    });
    const answeredAt = Date.now();
    expect(status).toBe(200);
    expect(errors).toBeUndefined();
    expect(data?.respondToHuman).toMatchObject({
      execId,
      teamName: REPORT,
      conversationId: asUuid(execId),
      run: { state: 'RESUMING' },
    });
    const submittedAt = Date.parse(data?.respondToHuman.submittedAt ?? '');
    expect(submittedAt).toBeGreaterThanOrEqual(sentAt);
    expect(submittedAt).toBeLessThanOrEqual(answeredAt);

    const { data: after } = await t.gql<{
      teamRun: {
        waitingFor: unknown;
        toolCalls: { toolName: string; endDate: string | null; output: string | null }[];
      };
    }>(
      `query($id: ID!) { teamRun(execId: $id) { waitingFor { since } toolCalls { toolName endDate output } } }`,
      {
        id: execId,
      },
    );
    expect(after?.teamRun.waitingFor).toBeNull();
    const human = after?.teamRun.toolCalls.find((call) => call.toolName === 'HUMAN_REVIEW');
    expect(human?.output).toBe(answer);
    expect(human?.endDate).not.toBeNull();

    // The simulator carries the run on, as RUN_TEAM would.
    await changes.until(() => changes.data.some((c) => c.teamRunChanged.run.execId === execId));
    await setRunState(pg, execId, 'RUNNING');
    await changes.until(
      () => changes.data.filter((c) => c.teamRunChanged.run.execId === execId).length >= 2,
    );
    await setRunState(pg, execId, 'SUCCEEDED');
    await changes.until(
      () => changes.data.filter((c) => c.teamRunChanged.run.execId === execId).length >= 3,
    );
    const steps = changes.data.map((c) => c.teamRunChanged).filter((c) => c.run.execId === execId);
    expect(steps.map((s) => `${s.previousState}->${s.state}`)).toEqual([
      'WAITING_FOR_HUMAN->RESUMING',
      'RESUMING->RUNNING',
      'RUNNING->SUCCEEDED',
    ]);
    const observed = steps.map((s) => Date.parse(s.observedAt));
    expect(observed[0]).toBeGreaterThanOrEqual(sentAt - INTERVAL);
    expect([...observed].sort()).toEqual(observed);
    changes.close();

    expect(await responses('submitted')).toBe(submittedBefore + 1);
    const audit = t.logs.find((l) => l.component === 'audit' && l.execId === execId);
    expect(audit).toMatchObject({
      action: 'respondToHuman',
      outcome: 'submitted',
      teamName: REPORT,
      textLength: answer.length,
      viewer: 'anonymous',
    });
    expect(JSON.stringify(t.logs)).not.toContain(answer);
  });

  test('answering a run that does not wait is CONFLICT with its state, and calls nothing', async () => {
    const execId = await waitingRun(pg);
    await setRunState(pg, execId, 'RESUMING');
    const conflicts = await responses('conflict');
    const calls = () =>
      metric(t.server, 'agentgraph_db_statements_total', { statement: 'runTeam.submit' });
    const callsBefore = await calls();
    const result = await t.post(RESPOND, { execId, response: 'yes' });
    expect(result?.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', state: 'RESUMING' });
    expect(result?.errors?.[0]?.message).toContain('RESUMING');
    expect(await calls()).toBe(callsBefore);
    expect(await responses('conflict')).toBe(conflicts + 1);
  });

  test('two answers to the same wait: one is accepted, the other is CONFLICT; one job', async () => {
    const execId = await waitingRun(pg);
    const results = await Promise.all([
      t.post<{ respondToHuman: Submission }>(RESPOND, { execId, response: 'first' }),
      t.post<{ respondToHuman: Submission }>(RESPOND, { execId, response: 'second' }),
    ]);
    expect(results.filter((r) => r.errors === undefined)).toHaveLength(1);
    expect(results.flatMap((r) => r.errors ?? []).map((e) => e.extensions?.code)).toEqual([
      'CONFLICT',
    ]);
    const { rows } = await pg.query(
      'SELECT job_name FROM emb_scheduler_jobs WHERE team_exec_id = $1',
      [execId],
    );
    expect(rows).toHaveLength(1);
  });

  test('a second answer while the first job has not moved the run yet collides on the job name', async () => {
    const execId = await waitingRun(pg);
    const first = await t.post(RESPOND, { execId, response: 'approve' });
    expect(first.errors).toBeUndefined();
    // As on Oracle before the scheduler starts the job: the run still reads as waiting, on
    // the same open call.
    await stillWaiting(pg, execId);
    const second = await t.post(RESPOND, { execId, response: 'approve again' });
    expect(second.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(second.errors?.[0]?.message).toContain('already been answered');
  });

  test('unknown run, empty or oversized answer', async () => {
    const missing = await t.post(RESPOND, { execId: 'NO_SUCH_RUN', response: 'yes' });
    expect(missing.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const execId = await waitingRun(pg);
    const empty = await t.post(RESPOND, { execId, response: '  ' });
    expect(empty.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const long = await t.post(RESPOND, { execId, response: 'é'.repeat(1501) });
    expect(long.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(long.errors?.[0]?.message).toContain('3000 bytes');
  });

  test('never over GET, and a form POST without the CSRF header is refused', async () => {
    const query = encodeURIComponent(
      `mutation { respondToHuman(execId: "X", response: "y") { execId } }`,
    );
    const get = await fetch(`${t.url}/graphql?query=${query}`, {
      headers: { 'x-graphql-yoga-csrf': '1', accept: 'application/json' },
    });
    expect(get.status).toBe(405);
    const form = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `query=${query}`,
    });
    expect(form.status).toBe(403);
  });
});

describe('runTeam', () => {
  test('starts a run that teamRuns finds by its conversation id, and subscribers see it', async () => {
    const changes = subscribeWs<{
      teamRunChanged: { previousState: string | null; state: string; run: { execId: string } };
    }>(
      ws,
      `subscription { teamRunChanged(filter: { teamName: "${REPORT}" }) { previousState state run { execId } } }`,
    );
    await settled(t.server, 1);
    const { data, errors } = await t.post<{ runTeam: Submission }>(
      `mutation { runTeam(teamName: "${REPORT}", prompt: "Summarize the Q4 report") { execId teamName conversationId } }`,
    );
    expect(errors).toBeUndefined();
    const conversationId = data?.runTeam.conversationId as string;
    expect(conversationId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    );
    const { data: found } = await t.gql<{
      teamRuns: { nodes: { execId: string; state: string; tasks: { input: string }[] }[] };
    }>(
      `query($c: String!) { teamRuns(filter: { conversationId: $c }) { nodes { execId state tasks { input } } } }`,
      { c: conversationId },
    );
    const run = found?.teamRuns.nodes[0];
    expect(found?.teamRuns.nodes).toHaveLength(1);
    expect(run?.state).toBe('RUNNING');
    expect(run?.tasks[0]?.input).toBe('Summarize the Q4 report');
    await changes.until(() =>
      changes.data.some((c) => c.teamRunChanged.run.execId === run?.execId),
    );
    expect(
      changes.data.find((c) => c.teamRunChanged.run.execId === run?.execId)?.teamRunChanged,
    ).toMatchObject({
      previousState: null,
      state: 'RUNNING',
    });
    changes.close();
  });

  test('an unknown team is NOT_FOUND with the near miss', async () => {
    const { errors } = await t.post(
      `mutation { runTeam(teamName: "REPORT_SUMMARY_TEAM", prompt: "x") { conversationId } }`,
    );
    expect(errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(errors?.[0]?.message).toContain(`did you mean "${REPORT}"?`);
  });
});

describe('who may act', () => {
  test('without authentication: the embedded database only; Oracle is FORBIDDEN naming the setting', () => {
    expect(actionForbidden('embedded', false)).toBeNull();
    expect(actionForbidden('oracle', true)).toBeNull();
    expect(actionForbidden('oracle', false)).toMatch(/AUTH_JWT_SECRET or AUTH_JWKS_URL/);
  });

  test('with tokens: the run’s owner and an admin may answer, another owner may not', async () => {
    const secured = await startTestServer({ AUTH_JWT_SECRET: SECRET, POLL_INTERVAL_MS: '150' });
    try {
      const { bearer } = hs256Tokens(SECRET);
      const securedPg = embeddedPg(secured.server);
      const [mine, other] = [await waitingRun(securedPg), await waitingRun(securedPg)];

      const analyst = await secured.post(
        RESPOND,
        { execId: mine, response: 'no' },
        await bearer({ db_user: 'ANALYST' }),
      );
      expect(analyst.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      const analystStart = await secured.post(
        `mutation { runTeam(teamName: "${REPORT}", prompt: "x") { conversationId } }`,
        {},
        await bearer({ db_user: 'ANALYST' }),
      );
      expect(analystStart.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');

      const owner = await secured.post(
        RESPOND,
        { execId: mine, response: 'yes' },
        await bearer({ db_user: 'APP_USER' }),
      );
      expect(owner.errors).toBeUndefined();
      const admin = await secured.post(
        RESPOND,
        { execId: other, response: 'yes' },
        await bearer({ roles: ['admin'] }),
      );
      expect(admin.errors).toBeUndefined();
      const audit = secured.logs
        .filter((l) => l.component === 'audit')
        .map((l) => [l.viewer, l.outcome]);
      expect(audit).toEqual([
        ['ANALYST', 'not_found'],
        ['ANALYST', 'not_found'],
        ['APP_USER', 'submitted'],
        ['root', 'submitted'],
      ]);
    } finally {
      await secured.stop();
    }
  });
});
