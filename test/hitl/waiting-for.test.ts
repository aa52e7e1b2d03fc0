import { randomUUID } from 'node:crypto';
import type { Client } from 'graphql-ws';
import { describe, expect, test } from 'vitest';
import type { EmbeddedPg } from '../../src/db/embedded/database.js';
import { asUuid } from '../../src/db/embedded/demo-data.js';
import { setRunState, startRun } from '../../src/db/embedded/simulator.js';
import { settled, subscribeSse, subscribeWs, until } from '../live/support.js';
import type { TestServer } from '../support/server.js';
import { INTERVAL, REPORT, waitingRun, withHitlServer } from './support.js';

let t: TestServer;
let pg: EmbeddedPg;
let ws: Client;
withHitlServer((server) => {
  ({ t, pg, ws } = server);
});

const WAIT = `waitingFor {
  since conversationId toolName agentName question questionJson
  task { taskOrder taskName state }
  toolCall { invocationId startDate endDate }
}`;

interface Wait {
  since: string | null;
  conversationId: string | null;
  toolName: string | null;
  agentName: string | null;
  question: string | null;
  questionJson: unknown;
  task: { taskOrder: number; taskName: string; state: string } | null;
  toolCall: { invocationId: string; startDate: string; endDate: string | null } | null;
}

describe('TeamRun.waitingFor', () => {
  test('names the open HUMAN call, its question, task, agent, since when and the conversation', async () => {
    const execId = await waitingRun(pg);
    const { data, errors } = await t.gql<{ teamRun: { state: string; waitingFor: Wait } }>(
      `query($id: ID!) { teamRun(execId: $id) { state ${WAIT} } }`,
      { id: execId },
    );
    expect(errors).toBeUndefined();
    const wait = data?.teamRun.waitingFor as Wait;
    expect(data?.teamRun.state).toBe('WAITING_FOR_HUMAN');
    expect(wait.toolName).toBe('HUMAN_REVIEW');
    expect(wait.agentName).toBe('REVIEWER');
    expect(wait.task).toEqual({
      taskOrder: 2,
      taskName: 'REVIEW_SUMMARY_TASK',
      state: 'WAITING_FOR_HUMAN',
    });
    expect(wait.toolCall?.endDate).toBeNull();
    expect(wait.since).toBe(wait.toolCall?.startDate);
    expect(wait.conversationId).toBe(asUuid(execId));
    expect(typeof wait.question).toBe('string');
    expect(wait.questionJson).toEqual(JSON.parse(wait.question as string));
  });

  test('is null for a run that does not wait', async () => {
    const { data } = await t.gql<{ teamRuns: { nodes: { waitingFor: Wait | null }[] } }>(
      `{ teamRuns(first: 5, filter: { states: [SUCCEEDED, RUNNING] }) { nodes { ${WAIT} } } }`,
    );
    expect(data?.teamRuns.nodes).toHaveLength(5);
    for (const node of data?.teamRuns.nodes ?? []) expect(node.waitingFor).toBeNull();
  });

  test('20 waiting runs with what they wait for cost one statement', async () => {
    // The demo's waiting runs, and as many more as make 20.
    const { rows } = await pg.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM dba_ai_agent_team_history WHERE state = 'WAITING_FOR_HUMAN'`,
    );
    for (let n = rows[0]?.n ?? 0; n < 20; n++) await waitingRun(pg);
    let result: { nodes: { execId: string; waitingFor: Wait | null }[] } | undefined;
    const statements = await t.countStatements(async () => {
      const { data, errors } = await t.gql<{ teamRuns: typeof result }>(
        `{ teamRuns(first: 20, filter: { states: [WAITING_FOR_HUMAN] }) { nodes { execId ${WAIT} } } }`,
      );
      expect(errors).toBeUndefined();
      result = data?.teamRuns;
    });
    expect(result?.nodes.length).toBe(20);
    for (const node of result?.nodes ?? []) expect(node.waitingFor).not.toBeNull();
    // The page with the tasks and tool calls of its 20 runs (src/schema/plan.ts).
    expect(statements).toBe(1);
  });
});

describe('unknown team names', () => {
  test('team(name:) says NOT_FOUND and names the near miss', async () => {
    const { data, errors } = await t.gql(`{ team(name: "report_summary_agent_team") { name } }`);
    expect(data?.team).toBeNull();
    expect(errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(errors?.[0]?.message).toContain(`did you mean "${REPORT}"?`);
    const far = await t.gql(`{ team(name: "NOTHING_LIKE_IT_AT_ALL") { name } }`);
    expect(far.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(far.errors?.[0]?.message).not.toContain('did you mean');
  });

  test('a subscription filter naming no team fails at once, over WebSocket and SSE', async () => {
    const changes = subscribeWs(
      ws,
      `subscription { teamRunChanged(filter: { teamName: "REPORT_SUMARY_AGENT_TEAM" }) { state } }`,
    );
    await changes.until(() => changes.events.length > 0 || changes.errors.length > 0);
    const wsErrors = (changes.errors[0] ?? changes.events[0]?.errors) as {
      message: string;
      extensions?: { code?: string };
    }[];
    expect(wsErrors[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(wsErrors[0]?.message).toContain(`did you mean "${REPORT}"?`);

    const sse = await subscribeSse(
      t.url,
      `subscription { teamsWaitingForHuman(teamName: "NO_SUCH_TEAM_ANYWHERE") { execId } }`,
    );
    await sse.until(() => sse.events.length > 0);
    expect(sse.events[0]?.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});

describe('subscriptions', () => {
  test('a change carries when it was observed, and a waiting run what it waits for', async () => {
    const execId = randomUUID().replaceAll('-', '').toUpperCase();
    await startRun(pg, { owner: 'APP_USER', teamName: REPORT, execId });
    const changes = subscribeWs<{
      teamRunChanged: {
        observedAt: string;
        state: string;
        run: { execId: string; waitingFor: Wait };
      };
    }>(
      ws,
      `subscription { teamRunChanged(filter: { teamName: "${REPORT}", states: [WAITING_FOR_HUMAN] }) {
        observedAt state run { execId ${WAIT} } } }`,
    );
    const waiting = subscribeWs<{
      teamsWaitingForHuman: { execId: string; waitingSince: string | null; waitingFor: Wait }[];
    }>(
      ws,
      `subscription { teamsWaitingForHuman(teamName: "${REPORT}") { execId waitingSince ${WAIT} } }`,
    );
    await settled(t.server, 2);
    const before = Date.now();
    await setRunState(pg, execId, 'RUNNING');
    await setRunState(pg, execId, 'WAITING_FOR_HUMAN');
    const [change] = await changes.take(1);
    const event = change?.teamRunChanged;
    expect(event?.run.execId).toBe(execId);
    const observedAt = Date.parse(event?.observedAt ?? '');
    expect(observedAt).toBeGreaterThanOrEqual(before - INTERVAL);
    expect(observedAt).toBeLessThanOrEqual(changes.events[0]?.at ?? 0);
    expect(event?.run.waitingFor.toolName).toBe('HUMAN_REVIEW');

    await until(() =>
      waiting.data.some((set) => set.teamsWaitingForHuman.some((run) => run.execId === execId)),
    );
    const last = waiting.data.at(-1)?.teamsWaitingForHuman.find((run) => run.execId === execId);
    expect(last?.waitingFor.toolName).toBe('HUMAN_REVIEW');
    expect(last?.waitingFor.since).toBe(last?.waitingSince);
    expect(last?.waitingFor.conversationId).toBe(asUuid(execId));
    changes.close();
    waiting.close();
  });
});
