import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { discoverCatalog } from '../../src/db/catalog.js';
import { setRunState, startRun } from '../../src/db/embedded/simulator.js';
import { ANONYMOUS_ADMIN } from '../../src/model/viewer.js';
import { TeamHistoryRepository } from '../../src/repositories/team-history.js';
import { embeddedPg } from '../live/support.js';
import { startTestServer, type TestServer } from '../support/server.js';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

interface Task {
  taskOrder: number;
  state: string;
  conversationId: string | null;
  failure: { message: string | null; jobName: string; logDate: string } | null;
  prompts: {
    totalCount: number;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
    nodes: { conversationId: string; prompt: string; response: string | null; created: string }[];
  } | null;
}

const TASKS = `tasks {
  taskOrder state conversationId
  failure { message jobName logDate }
  prompts(first: 3) { totalCount pageInfo { hasNextPage endCursor } nodes { conversationId prompt response created } }
}`;

describe('TaskRun.failure and TaskRun.prompts', () => {
  test('20 failed runs with their failures and prompts cost three statements', async () => {
    let runs: { execId: string; tasks: Task[] }[] = [];
    const statements = await t.countStatements(async () => {
      const { data, errors } = await t.gql<{ teamRuns: { nodes: typeof runs } }>(
        `{ teamRuns(first: 20, filter: { states: [FAILED] }) { nodes { execId ${TASKS} } } }`,
      );
      expect(errors).toBeUndefined();
      runs = data?.teamRuns.nodes ?? [];
    });
    // The runs with their tasks, the failures of those tasks, the prompts of their conversations.
    expect(statements).toBe(3);
    expect(runs).toHaveLength(20);
    for (const run of runs) {
      for (const task of run.tasks) {
        if (task.state === 'FAILED') {
          expect(task.failure?.message).toMatch(/^ORA-\d{5}: /);
          expect(task.failure?.jobName).toContain('$');
        } else {
          expect(task.failure).toBeNull();
        }
        const created = task.prompts?.nodes.map((p) => p.created) ?? [];
        expect([...created].sort()).toEqual(created);
        for (const prompt of task.prompts?.nodes ?? []) {
          expect(prompt.conversationId).toBe(task.conversationId);
        }
      }
      const failedTask = run.tasks.find((task) => task.state === 'FAILED');
      expect(failedTask?.prompts?.totalCount).toBe(run.tasks.length);
    }
  });

  test('prompts page through a conversation in time order', async () => {
    const { data } = await t.gql<{
      teamRuns: { nodes: { execId: string; tasks: { prompts: { totalCount: number } }[] }[] };
    }>(
      `{ teamRuns(first: 50, filter: { states: [SUCCEEDED] }) { nodes { execId tasks { prompts { totalCount } } } } }`,
    );
    const run = data?.teamRuns.nodes.find((r) => (r.tasks[0]?.prompts.totalCount ?? 0) >= 4);
    expect(run).toBeDefined();
    const PAGE = `query($id: ID!, $first: Int!, $after: String) { teamRun(execId: $id) { tasks {
      prompts(first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor } nodes { created prompt } } } } }`;
    type Page = { teamRun: { tasks: Task[] } };
    const whole = await t.gql<Page>(PAGE, { id: run?.execId, first: 100 });
    const expected = whole.data?.teamRun.tasks[0]?.prompts?.nodes ?? [];
    expect(expected.map((p) => p.created)).toEqual(expected.map((p) => p.created).sort());
    const paged: unknown[] = [];
    let after: string | null = null;
    for (let i = 0; i < 10; i++) {
      const page: Page | null | undefined = (
        await t.gql<Page>(PAGE, { id: run?.execId, first: 2, after })
      ).data;
      const prompts: Task['prompts'] | undefined = page?.teamRun.tasks[0]?.prompts;
      paged.push(...(prompts?.nodes ?? []));
      if (!prompts?.pageInfo.hasNextPage) break;
      after = prompts.pageInfo.endCursor;
    }
    expect(paged).toEqual(expected);
    expect(paged.length).toBe(run?.tasks[0]?.prompts.totalCount);
  });

  test('a run the simulator fails has its failure and its prompts at once', async () => {
    const pg = embeddedPg(t.server);
    const execId = randomUUID().replaceAll('-', '').toUpperCase();
    await startRun(pg, {
      owner: 'APP_USER',
      teamName: 'ORDER_SUPPORT_TEAM',
      execId,
      prompt: 'Refund order 4242',
    });
    await setRunState(pg, execId, 'FAILED');
    const { data } = await t.gql<{ teamRun: { tasks: Task[] } }>(
      `query($id: ID!) { teamRun(execId: $id) { ${TASKS} } }`,
      { id: execId },
    );
    const [task] = data?.teamRun.tasks ?? [];
    expect(task?.state).toBe('FAILED');
    expect(task?.failure?.message).toMatch(/^ORA-20404/);
    expect(task?.failure?.jobName).toBe('ORDER_SUPPORT_TEAM$ANSWER_ORDER_QUESTION');
    expect(task?.prompts?.nodes.map((p) => p.prompt)).toEqual([
      'ANSWER_ORDER_QUESTION: Refund order 4242',
    ]);
  });

  test('without the scheduler view, failures read as none and send no statement', async () => {
    const catalog = await discoverCatalog(
      t.server.driver,
      t.server.config.database.viewScope,
      'APP_USER',
    );
    const repository = new TeamHistoryRepository(
      t.server.driver,
      { ...catalog, jobRunDetails: { ...catalog.jobRunDetails, columns: null } },
      ANONYMOUS_ADMIN,
    );
    const statements = await t.countStatements(async () => {
      expect(await repository.failuresOf(['A', 'B'])).toEqual([[], []]);
    });
    expect(statements).toBe(0);
    expect(repository.failuresReadable).toBe(false);
  });

  test('the demo’s HUMAN calls ask real questions', async () => {
    const { data } = await t.gql<{
      toolCalls: { nodes: { toolName: string; input: string; output: string | null }[] };
    }>(
      `{ toolCalls(first: 100, filter: { toolName: "REFUND_APPROVAL" }) { nodes { toolName input output } } }`,
    );
    const calls = data?.toolCalls.nodes ?? [];
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      const question = JSON.parse(call.input) as {
        question: string;
        order_id?: string;
        missing?: string[];
      };
      expect(question.question).toMatch(/order/i);
      expect(question.order_id ?? question.missing).toBeDefined();
      if (call.output) expect(JSON.parse(call.output)).toMatchObject({ answer: 'approve' });
    }
  });
});
