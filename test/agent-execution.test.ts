import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { EmbeddedPg } from '../src/db/embedded/database.js';
import { TRACE_MEASURES } from '../src/model/agent-trace.js';
import { embeddedPg, metric, until, wsClient } from './live/support.js';
import { startTestServer, type TestServer } from './support/server.js';
import { hs256Tokens } from './support/tokens.js';
import { WAIT_MS } from './support/wait.js';

const EXECUTE = `mutation($name: String!, $inputs: [AgentInput!]!, $trace: Boolean) {
  executeAgent(name: $name, inputs: $inputs, trace: $trace) {
    agentName owner output startedAt durationMs
    trace {
      raw
      root { kind component name children { kind name children { kind } } }
      nodes { index parentIndex depth kind component name startTime offsetMs durationMs inputTokens outputTokens branch }
      totals { ${TRACE_MEASURES.map((m) => m.field).join(' ')} llmTimePct toolTimePct }
    }
  }
}`;

interface TraceNode {
  index: number;
  parentIndex: number | null;
  depth: number;
  kind: string;
  component: string;
  name: string | null;
  startTime: string | null;
  offsetMs: number | null;
  durationMs: number | null;
  inputTokens: number | null;
  outputTokens: number | null;
  branch: string | null;
}

interface Execution {
  agentName: string;
  owner: string;
  output: Record<string, unknown>;
  startedAt: string;
  durationMs: number;
  trace: {
    raw: unknown;
    root: { kind: string; component: string; name: string; children: { kind: string }[] } | null;
    nodes: TraceNode[] | null;
    totals: Record<string, number> | null;
  } | null;
}

const SUMMARY = `{ execStatSummary { executionCount totals { ${TRACE_MEASURES.filter(
  (m) => m.kind !== 'nodeTime',
)
  .map((m) => m.field)
  .join(' ')} } } }`;

let t: TestServer;
let pg: EmbeddedPg;
beforeAll(async () => {
  t = await startTestServer();
  pg = embeddedPg(t.server);
});
afterAll(() => t.stop());

/** Rows of GV$AGENT_EXEC_STAT in a server's embedded database. */
const rowsIn = async (db: EmbeddedPg) =>
  Number(
    (await db.query<{ n: number }>('SELECT count(*) AS n FROM gv$agent_exec_stat')).rows[0]?.n,
  );
const execStatRows = () => rowsIn(pg);
const executeCalls = () =>
  metric(t.server, 'agentgraph_db_statements_total', { statement: 'agents.execute' });
const executions = (outcome: string) =>
  metric(t.server, 'agentgraph_agent_executions_total', { outcome });

describe('executeAgent: the call contract, checked before EXECUTE_AGENT', () => {
  const cases: [
    string,
    { name: string; value: unknown }[],
    { input: string; problem: string }[],
  ][] = [
    [
      'a required input missing',
      [{ name: 'order_id', value: 'A-1' }],
      [{ input: 'question', problem: 'missing' }],
    ],
    [
      'an unknown input',
      [
        { name: 'order_id', value: 'A-1' },
        { name: 'question', value: 'Where is it?' },
        { name: 'priority', value: 'high' },
      ],
      [{ input: 'priority', problem: 'unknown' }],
    ],
    [
      'a misspelled input (case counts)',
      [
        { name: 'ORDER_ID', value: 'A-1' },
        { name: 'question', value: 'Where is it?' },
      ],
      [
        { input: 'ORDER_ID', problem: 'misspelled' },
        { input: 'order_id', problem: 'missing' },
      ],
    ],
    [
      'a value of the wrong type',
      [
        { name: 'order_id', value: 42 },
        { name: 'question', value: 'Where is it?' },
      ],
      [{ input: 'order_id', problem: 'type' }],
    ],
    [
      'an input given twice',
      [
        { name: 'order_id', value: 'A-1' },
        { name: 'order_id', value: 'A-2' },
        { name: 'question', value: 'Where is it?' },
      ],
      [{ input: 'order_id', problem: 'duplicate' }],
    ],
  ];

  test.each(cases)(
    '%s: BAD_USER_INPUT naming it, EXECUTE_AGENT never called',
    async (_, inputs, problems) => {
      const [rowsBefore, callsBefore, refusedBefore] = [
        await execStatRows(),
        await executeCalls(),
        await executions('bad_input'),
      ];
      let result: Awaited<ReturnType<typeof t.post>> | undefined;
      // The contract is the agent's description: reading it is the one statement a refusal costs.
      const statements = await t.countStatements(async () => {
        result = await t.post(EXECUTE, { name: 'ORDER_ASSISTANT', inputs });
      });
      const error = result?.errors?.[0];
      expect(result?.data).toBeNull();
      expect(error?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(error?.extensions?.problems).toEqual(problems);
      expect(error?.extensions?.acceptedInputs).toEqual(['order_id', 'question']);
      for (const { input } of problems) expect(error?.message).toContain(`"${input}"`);
      expect(error?.message).toContain('Accepted inputs: order_id (string), question (string)');
      expect(statements).toBe(1);
      expect(await executeCalls()).toBe(callsBefore);
      expect(await execStatRows()).toBe(rowsBefore);
      expect(await executions('bad_input')).toBe(refusedBefore + 1);
    },
  );

  test('inputs past their bounds are refused before any statement', async () => {
    const many = Array.from({ length: 101 }, (_, i) => ({ name: `in${i}`, value: i }));
    const big = [{ name: 'report_text', value: 'x'.repeat(40_000) }];
    for (const inputs of [many, big]) {
      let code: unknown;
      const statements = await t.countStatements(async () => {
        code = (await t.post(EXECUTE, { name: 'REPORT_SUMMARIZER', inputs })).errors?.[0]
          ?.extensions?.code;
      });
      expect(code).toBe('BAD_USER_INPUT');
      expect(statements).toBe(0);
    }
  });

  test('an unknown agent is NOT_FOUND', async () => {
    const { errors } = await t.post(EXECUTE, { name: 'NO_SUCH_AGENT', inputs: [] });
    expect(errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(errors?.[0]?.message).toContain('NO_SUCH_AGENT');
  });
});

describe('executeAgent: a successful execution over HTTP', () => {
  test('without trace: the output shaped by the agent’s outputs, one V$ row more', async () => {
    const rowsBefore = await execStatRows();
    const succeeded = await executions('succeeded');
    const inputs = [
      { name: 'order_id', value: 'A-1001' },
      { name: 'amount', value: 25.5 },
      { name: 'reason', value: 'arrived broken' },
    ];
    const { status, data, errors } = await t.post<{ executeAgent: Execution }>(EXECUTE, {
      name: 'REFUND_CHECKER',
      inputs,
    });
    expect(status).toBe(200);
    expect(errors).toBeUndefined();
    const execution = data?.executeAgent;
    expect(execution).toMatchObject({
      agentName: 'REFUND_CHECKER',
      owner: 'APP_USER',
      trace: null,
    });
    expect(Object.keys(execution?.output ?? {})).toEqual(['approved', 'explanation']);
    expect(typeof execution?.output.approved).toBe('boolean');
    expect(execution?.output.explanation).toContain('order_id="A-1001"');
    expect(execution?.durationMs).toBeGreaterThanOrEqual(0);
    expect(await execStatRows()).toBe(rowsBefore + 1);
    expect(await executions('succeeded')).toBe(succeeded + 1);

    // Deterministic: the same inputs give the same output.
    const again = await t.post<{ executeAgent: Execution }>(EXECUTE, {
      name: 'REFUND_CHECKER',
      inputs,
    });
    expect(again.data?.executeAgent.output).toEqual(execution?.output);
    // An input of an output's title is echoed (seed 000's ORDER_REQUEST_FLOW).
    const flow = await t.post<{ executeAgent: Execution }>(EXECUTE, {
      name: 'ORDER_REQUEST_FLOW',
      inputs: [{ name: 'order_id', value: 'A-7' }],
    });
    expect(flow.data?.executeAgent.output).toEqual({ order_id: 'A-7' });
  });

  test('with trace: a tree of components whose totals are the V$ row the execution added', async () => {
    const before = await t.post<{
      execStatSummary: { executionCount: number; totals: Record<string, number> };
    }>(SUMMARY);
    const { data, errors } = await t.post<{ executeAgent: Execution }>(EXECUTE, {
      name: 'ORDER_ASSISTANT',
      inputs: [
        { name: 'order_id', value: 'A-1001' },
        { name: 'question', value: 'When will it ship?' },
      ],
      trace: true,
    });
    expect(errors).toBeUndefined();
    const trace = data?.executeAgent.trace;
    expect(trace?.root).toMatchObject({ kind: 'Flow', component: 'FLOW', name: 'ORDER_ASSISTANT' });
    expect(trace?.root?.children.map((c) => c.kind)).toEqual([
      'StartNode',
      'Agent',
      'BranchingNode',
      'MapNode',
      'EndNode',
    ]);
    const nodes = trace?.nodes ?? [];
    expect(nodes[0]).toMatchObject({ index: 0, parentIndex: null, depth: 0, offsetMs: 0 });
    for (const node of nodes.slice(1)) {
      const parent = nodes[node.parentIndex ?? -1];
      expect(parent?.depth).toBe(node.depth - 1);
      // Each component lies inside its parent on the time axis.
      expect(node.offsetMs).toBeGreaterThanOrEqual(parent?.offsetMs ?? 0);
      expect((node.offsetMs ?? 0) + (node.durationMs ?? 0)).toBeLessThanOrEqual(
        (parent?.offsetMs ?? 0) + (parent?.durationMs ?? 0),
      );
    }
    const llm = nodes.filter((n) => n.component === 'LLM_NODE');
    expect(llm.length).toBeGreaterThan(0);
    for (const n of llm) expect(n.inputTokens).toBeGreaterThan(0);
    expect(nodes.some((n) => n.kind === 'AgentRound' && n.depth === 2)).toBe(true);

    const totals = trace?.totals ?? {};
    expect(totals.llmCallCount).toBe(llm.length);
    expect(totals.inputTokens).toBe(llm.reduce((sum, n) => sum + (n.inputTokens ?? 0), 0));
    expect(totals.totalTimeExecMs).toBe(nodes[0]?.durationMs);
    expect(totals.llmTimePct).toBeGreaterThan(50);

    // The statistics moved by exactly this execution's totals (no other activity here).
    const after = await t.post<{
      execStatSummary: { executionCount: number; totals: Record<string, number> };
    }>(SUMMARY);
    expect(after.data?.execStatSummary.executionCount).toBe(
      (before.data?.execStatSummary.executionCount ?? 0) + 1,
    );
    for (const [field, value] of Object.entries(after.data?.execStatSummary.totals ?? {})) {
      expect([field, value - (before.data?.execStatSummary.totals[field] ?? 0)]).toEqual([
        field,
        totals[field],
      ]);
    }
    const [row] = (
      await pg.query<Record<string, string>>(
        'SELECT agent_executor_total_time_exec AS exec, agent_executor_total_time_llm AS llm, agent_executor_total_time_tool AS tool FROM gv$agent_exec_stat ORDER BY ctid DESC LIMIT 1',
      )
    ).rows;
    expect([Number(row?.exec), Number(row?.llm), Number(row?.tool)]).toEqual([
      totals.totalTimeExecMs,
      totals.totalTimeLlmMs,
      totals.totalTimeToolMs,
    ]);
  });

  test('the audit log names the agent and counts the inputs, never their values', async () => {
    await t.post(EXECUTE, {
      name: 'ORDER_REQUEST_FLOW',
      inputs: [{ name: 'order_id', value: 'SECRET-ORDER-42' }],
    });
    const entry = t.logs.filter((l) => l.component === 'audit').at(-1);
    expect(entry).toMatchObject({
      action: 'executeAgent',
      agentName: 'ORDER_REQUEST_FLOW',
      inputCount: 1,
      outcome: 'succeeded',
    });
    expect(JSON.stringify(t.logs)).not.toContain('SECRET-ORDER-42');
  });
});

describe('executeAgent: who may run it, and its limits', () => {
  const SECRET = 'an-agent-execution-test-secret-long-enough';
  const { bearer } = hs256Tokens(SECRET);
  const SUMMARIZE = {
    name: 'REPORT_SUMMARIZER',
    inputs: [
      { name: 'report_text', value: 'Sales grew.' },
      { name: 'max_words', value: 20 },
      { name: 'language', value: 'en' },
    ],
  };

  test('the agent’s owner and an admin may execute it; another owner does not see it', async () => {
    const secured = await startTestServer({ AUTH_JWT_SECRET: SECRET });
    try {
      const other = await secured.post(EXECUTE, SUMMARIZE, await bearer({ db_user: 'APP_USER' }));
      expect(other.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      const owner = await secured.post<{ executeAgent: Execution }>(
        EXECUTE,
        SUMMARIZE,
        await bearer({ db_user: 'ANALYST' }),
      );
      expect(owner.errors).toBeUndefined();
      expect(owner.data?.executeAgent.owner).toBe('ANALYST');
      const admin = await secured.post(EXECUTE, SUMMARIZE, await bearer({ roles: ['admin'] }));
      expect(admin.errors).toBeUndefined();
      expect(
        secured.logs.filter((l) => l.component === 'audit').map((l) => [l.viewer, l.outcome]),
      ).toEqual([
        ['APP_USER', 'not_found'],
        ['ANALYST', 'succeeded'],
        ['root', 'succeeded'],
      ]);
    } finally {
      await secured.stop();
    }
  });

  test('each execution is one action of the budget: capped per operation, counted per identity', async () => {
    const budgeted = await startTestServer({
      RATE_LIMIT_ACTIONS: '2',
      RATE_LIMIT_WINDOW_MS: '600000',
      MAX_ACTIONS_PER_OPERATION: '1',
    });
    try {
      const rows = () => rowsIn(embeddedPg(budgeted.server));
      const before = await rows();
      const twice = await budgeted.post(
        `mutation($inputs: [AgentInput!]!) {
          a: executeAgent(name: "REPORT_SUMMARIZER", inputs: $inputs) { durationMs }
          b: executeAgent(name: "REPORT_SUMMARIZER", inputs: $inputs) { durationMs }
        }`,
        { inputs: SUMMARIZE.inputs },
      );
      expect(twice.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(twice.errors?.[0]?.message).toContain('MAX_ACTIONS_PER_OPERATION');
      expect(await rows()).toBe(before);

      for (let i = 0; i < 2; i++) {
        expect((await budgeted.post(EXECUTE, SUMMARIZE)).errors).toBeUndefined();
      }
      const third = await budgeted.post(EXECUTE, SUMMARIZE);
      expect(third.status).toBe(429);
      expect(third.errors?.[0]?.message).toContain('RATE_LIMIT_ACTIONS');
      expect(await rows()).toBe(before + 2);
    } finally {
      await budgeted.stop();
    }
  });

  test('EXECUTE_AGENT_TIMEOUT_MS: TIMEOUT, and the call never completes behind it', async () => {
    const slow = await startTestServer({
      EMBEDDED_LATENCY_MS: '300',
      EXECUTE_AGENT_TIMEOUT_MS: '50',
    });
    try {
      const count = () => rowsIn(embeddedPg(slow.server));
      const before = await count();
      const { errors } = await slow.post(EXECUTE, SUMMARIZE);
      expect(errors?.[0]?.extensions?.code).toBe('TIMEOUT');
      expect(errors?.[0]?.message).toContain('EXECUTE_AGENT_TIMEOUT_MS');
      expect(
        await metric(slow.server, 'agentgraph_agent_executions_total', { outcome: 'timeout' }),
      ).toBe(1);
      expect(await count()).toBe(before);
    } finally {
      await slow.stop();
    }
  });

  test('a client that goes away cancels the execution, over HTTP and over WebSocket', async () => {
    const slow = await startTestServer({ EMBEDDED_LATENCY_MS: '400' });
    try {
      const count = () => rowsIn(embeddedPg(slow.server));
      const calls = () =>
        metric(slow.server, 'agentgraph_db_statements_total', { statement: 'agents.execute' });
      const cancelled = () =>
        metric(slow.server, 'agentgraph_agent_executions_total', { outcome: 'cancelled' });
      const before = await count();

      const client = new AbortController();
      const sent = fetch(`${slow.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: EXECUTE, variables: SUMMARIZE }),
        signal: client.signal,
      }).catch((error: unknown) => error);
      await until(async () => (await calls()) === 1, WAIT_MS, 'EXECUTE_AGENT to be called');
      client.abort();
      expect(await sent).toBeInstanceOf(Error);
      await until(
        async () => (await cancelled()) === 1,
        WAIT_MS,
        'the HTTP execution to be cancelled',
      );

      const socket = wsClient(slow.url);
      socket.subscribe(
        { query: EXECUTE, variables: SUMMARIZE },
        { next: () => {}, error: () => {}, complete: () => {} },
      );
      await until(async () => (await calls()) === 2, WAIT_MS, 'EXECUTE_AGENT over WebSocket');
      await socket.dispose();
      await until(
        async () => (await cancelled()) === 2,
        WAIT_MS,
        'the WebSocket execution to be cancelled',
      );
      expect(await count()).toBe(before);
    } finally {
      await slow.stop();
    }
  });
});
