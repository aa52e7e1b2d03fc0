import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestServer, type TestServer } from './support/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

async function post(query: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  return response.json();
}

test('each request logs one JSON line with its id, operation, duration, statements and outcome', async () => {
  const before = t.logs.length;
  await post(
    'query Dashboard { teams(first: 3) { nodes { name runs(first: 2) { nodes { state } } } } }',
    {
      'x-request-id': 'req-dashboard-1',
    },
  );
  await post('query Missing { team(name: "NO_SUCH_TEAM") { name } }');
  const requests = t.logs.slice(before).filter((line) => line.msg === 'request');
  expect(requests).toHaveLength(2);
  expect(requests[0]).toMatchObject({
    requestId: 'req-dashboard-1',
    operation: 'Dashboard',
    statements: 2,
    status: 200,
    outcome: 'ok',
  });
  expect(requests[0]?.durationMs).toBeTypeOf('number');
  // The team, then the visible names for the "did you mean" of the NOT_FOUND.
  expect(requests[1]).toMatchObject({ operation: 'Missing', statements: 2, outcome: 'NOT_FOUND' });
  expect(requests[1]?.requestId).toMatch(/^[0-9a-f-]{36}$/);
});

test('/metrics counts requests and their latency by operation, and errors by code', async () => {
  await post('query Probe { agents(first: 1) { totalCount } }');
  await post('{ agents(first: 1000) { totalCount } }');
  const text = await (await fetch(`${t.url}/metrics`)).text();
  expect(text).toMatch(/agentgraph_requests_total\{operation="Probe",outcome="ok"\} 1/);
  expect(text).toMatch(
    /agentgraph_requests_total\{operation="anonymous",outcome="BAD_USER_INPUT"\} \d/,
  );
  expect(text).toMatch(/agentgraph_request_duration_seconds_count\{operation="Probe"\} 1/);
  expect(text).toMatch(/agentgraph_graphql_errors_total\{code="BAD_USER_INPUT"\} \d/);
  expect(text).toMatch(/agentgraph_db_statements_total\{statement="agents.page"\} \d/);
});

test('start-up logs what it discovered: session user, DESCRIBE_AGENT decision, date types, duration', () => {
  const line = t.logs.find((entry) => entry.msg.startsWith('database discovered in '));
  expect(line).toMatchObject({
    level: 30,
    sessionUser: 'APP_USER',
    currentSchema: 'APP_USER',
    timeZone: '+00:00',
    describeAgentCallable: true,
    dateColumns: expect.objectContaining({
      'DBA_AI_AGENTS.CREATE_TIME': 'DATE',
      'DBA_AI_AGENT_TEAM_HISTORY.START_DATE': 'TIMESTAMP(6)',
    }),
    discoveryMs: expect.any(Number),
  });
  expect(line?.msg).toBe(
    `database discovered in ${line?.discoveryMs} ms: session user APP_USER, DBMS_AI_AGENT.DESCRIBE_AGENT callable`,
  );
});
