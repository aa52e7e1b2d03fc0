import { afterAll, beforeAll, expect, test } from 'vitest';
import { metric, subscribeSse, until } from '../live/support.js';
import { startTestServer, type TestServer } from '../support/server.js';

const LATENCY_MS = 400;

let t: TestServer;
beforeAll(async () => {
  // Every round trip sleeps 400 ms; no operation that touches the database may take 150.
  t = await startTestServer({
    EMBEDDED_LATENCY_MS: String(LATENCY_MS),
    REQUEST_TIMEOUT_MS: '150',
  });
});
afterAll(() => t.stop());

const post = (query: string) =>
  fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });

test('a slow operation answers TIMEOUT, and its execution stops at the statement in flight', async () => {
  const statements = await t.countStatements(async () => {
    const response = await post(`{ teams(first: 5) { nodes { name tools { name }
      runs(first: 2) { nodes { tasks { toolCalls { toolName } } } } } } }`);
    const body = (await response.json()) as {
      data: unknown;
      errors: { message: string; extensions: { code: string } }[];
    };
    expect(body.data).toBeNull();
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]?.extensions.code).toBe('TIMEOUT');
    expect(body.errors[0]?.message).toMatch(/150 ms/);
    // Let the statement already sent come back; the levels below it must not start.
    await new Promise((resolve) => setTimeout(resolve, LATENCY_MS * 1.5));
  });
  expect(statements).toBe(1);
});

test('a live query answers TIMEOUT as the query does, and ends with its client', async () => {
  const live = await subscribeSse<unknown>(
    t.url,
    'query @live { teams(first: 5) { nodes { name runs(first: 2) { nodes { execId } } } } }',
  );
  await live.take(1);
  const answer = live.events[0];
  expect(answer?.data ?? null).toBeNull();
  expect(answer?.errors?.[0]?.extensions?.code).toBe('TIMEOUT');
  expect(answer?.errors?.[0]?.message).toMatch(/150 ms/);
  live.close();
  await until(async () => (await metric(t.server, 'agentgraph_live_queries')) === 0);
});

test('the server stays healthy after a timeout', async () => {
  expect((await fetch(`${t.url}/health`)).status).toBe(200);
  const response = await post('{ __typename }');
  expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
});

test('a client that goes away stops its query at the statement in flight, with nothing logged as an internal error', async () => {
  // No timeout in the way: the execution's own answer is the one masked.
  const server = await startTestServer({ EMBEDDED_LATENCY_MS: String(LATENCY_MS) });
  try {
    const statementsBefore = await server.server.metrics.statementCount();
    const client = new AbortController();
    const request = fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query:
          '{ teams(first: 5) { nodes { name runs(first: 2) { nodes { tasks { taskName } } } } } }',
      }),
      signal: client.signal,
    });
    request.catch(() => undefined);
    // Gone once the first statement is on its way.
    while ((await server.server.metrics.statementCount()) === statementsBefore) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    client.abort();
    await expect(request).rejects.toThrow();
    // Let the statement already sent come back; the levels below it must not start.
    await new Promise((resolve) => setTimeout(resolve, LATENCY_MS * 1.5));
    expect((await server.server.metrics.statementCount()) - statementsBefore).toBe(1);
    expect(server.logs.filter((entry) => entry.msg === 'internal error')).toEqual([]);
  } finally {
    await server.stop();
  }
});
