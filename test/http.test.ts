import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CSRF_HEADER } from '../src/hardening/index.js';
import { EXAMPLE_QUERY } from '../src/yoga.js';
import { startTestServer, type TestServer } from './support/server.js';

/** Everything here goes over the listening socket, as a browser, a probe or a scraper would. */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

/** The value of one Prometheus sample line, e.g. `name{label="x"} 3`. */
function sample(text: string, line: RegExp): number | undefined {
  const found = text.split('\n').find((l) => line.test(l));
  return found === undefined ? undefined : Number(found.split(' ').at(-1));
}

describe('probes', () => {
  test('GET /health is 200', async () => {
    const response = await fetch(`${t.url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  test('GET /ready is 200 while the database answers', async () => {
    const response = await fetch(`${t.url}/ready`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ready' });
  });
});

describe('GET /metrics', () => {
  test('is Prometheus text with the contract metrics', async () => {
    const response = await fetch(`${t.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    for (const [name, type] of [
      ['agentgraph_db_statements_total', 'counter'],
      ['agentgraph_poll_cycles_total', 'counter'],
      ['agentgraph_poll_cycle_duration_seconds', 'histogram'],
      ['agentgraph_a2a_requests_total', 'counter'],
      ['agentgraph_active_subscriptions', 'gauge'],
    ]) {
      expect(text).toContain(`# TYPE ${name} ${type}`);
    }
    expect(sample(text, /^agentgraph_active_subscriptions /)).toBe(0);
    expect(text).toContain('process_resident_memory_bytes');
  });

  test('counts every database round trip, by statement', async () => {
    const line = /^agentgraph_db_statements_total\{statement="agents\.page"\} /;
    const before = sample(await (await fetch(`${t.url}/metrics`)).text(), line) ?? 0;
    await t.post('{ agents(first: 3) { totalCount } }');
    await t.post('{ agents(first: 50) { totalCount nodes { name } } }');
    const after = sample(await (await fetch(`${t.url}/metrics`)).text(), line);
    expect(after).toBe(before + 2);
  });

  test('times every database round trip, by statement', async () => {
    const count = /^agentgraph_db_statement_duration_seconds_count\{statement="agents\.page"\} /;
    const sum = /^agentgraph_db_statement_duration_seconds_sum\{statement="agents\.page"\} /;
    const slowest =
      /^agentgraph_db_statement_duration_seconds_bucket\{le="\+Inf",statement="agents\.page"\} /;
    const before = await (await fetch(`${t.url}/metrics`)).text();
    await t.post('{ agents(first: 3) { totalCount } }');
    await t.post('{ agents(first: 50) { totalCount nodes { name } } }');
    const after = await (await fetch(`${t.url}/metrics`)).text();
    expect(after).toContain('# TYPE agentgraph_db_statement_duration_seconds histogram');
    expect(sample(after, count)).toBe((sample(before, count) ?? 0) + 2);
    expect(sample(after, slowest)).toBe((sample(before, slowest) ?? 0) + 2);
    expect(sample(after, sum) ?? 0).toBeGreaterThan(sample(before, sum) ?? 0);
  });
});

describe('/graphql', () => {
  test('GET from a browser serves GraphiQL with the example query in the editor', async () => {
    const response = await fetch(`${t.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toContain('<title>agent-graph</title>');
    expect(html).toContain(JSON.stringify(EXAMPLE_QUERY));
  });

  test('the example query runs without errors and finds data', async () => {
    const { status, data, errors } = await t.post<{
      agents: { totalCount: number; nodes: unknown[] };
      slowExecutions: { nodes: { totalTimeExecMs: number }[] };
      execStatSummary: { executionCount: number };
    }>(EXAMPLE_QUERY);
    expect(status).toBe(200);
    expect(errors).toBeUndefined();
    expect(data?.agents.nodes).toHaveLength(5);
    expect(data?.slowExecutions.nodes.length).toBeGreaterThan(0);
    expect(data?.slowExecutions.nodes.every((n) => n.totalTimeExecMs > 2000)).toBe(true);
    expect(data?.execStatSummary.executionCount).toBeGreaterThan(0);
  });

  test("the README's first query runs without errors", async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const query = /## A first query\s+```graphql\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(query).toBeDefined();
    const { data, errors } = await t.post(query as string);
    expect(errors).toBeUndefined();
    expect(Object.keys(data ?? {})).toEqual(['agents', 'agent', 'execStats', 'execStatSummary']);
  });

  test('POST with JSON answers JSON', async () => {
    const response = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        query: 'query One($name: String!) { agent(name: $name) { name owner } }',
        variables: { name: 'ORDER_REQUEST_FLOW' },
        operationName: 'One',
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      data: { agent: { name: 'ORDER_REQUEST_FLOW', owner: 'APP_USER' } },
    });
  });

  test('GET with the query in the URL works too', async () => {
    const query = encodeURIComponent('{ execStatSummary { executionCount } }');
    // GET needs the CSRF-prevention header (a browser cannot add it to a cross-site request).
    const response = await fetch(`${t.url}/graphql?query=${query}`, {
      headers: { accept: 'application/json', [CSRF_HEADER]: '1' },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      data: { execStatSummary: { executionCount: number } };
    };
    expect(body.data.execStatSummary.executionCount).toBeGreaterThan(0);
  });
});
