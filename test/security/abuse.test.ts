import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXAMPLE_QUERY } from '../../src/yoga.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ABUSE_CASES, DASHBOARD } from './abuse-cases.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

interface ErrorBody {
  data?: unknown;
  errors?: { message: string; extensions?: { code?: string } }[];
}

async function expectHealthy(): Promise<void> {
  const health = await fetch(`${t.url}/health`);
  expect(health.status).toBe(200);
  const response = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ agents(first: 1) { totalCount } }' }),
  });
  const body = (await response.json()) as ErrorBody;
  expect(body.errors).toBeUndefined();
  expect(body.data).toMatchObject({ agents: { totalCount: expect.any(Number) } });
}

describe('abuse', () => {
  test.each(ABUSE_CASES)('$name is rejected before any database work', async (abuse) => {
    let response: Response | undefined;
    let body: ErrorBody = {};
    const statements = await t.countStatements(async () => {
      response = await abuse.send(t.url);
      body = (await response.json()) as ErrorBody;
    });
    expect(response?.status).toBe(abuse.status);
    expect(body.data ?? null).toBeNull();
    expect(body.errors).toHaveLength(1);
    expect(body.errors?.[0]?.extensions?.code).toBe(abuse.code);
    expect(body.errors?.[0]?.message).toMatch(abuse.message);
    expect(statements).toBe(0);
    await expectHealthy();
  });

  test('graphql-response+json clients get 400 for a refused document', async () => {
    const response = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
      },
      body: JSON.stringify({ query: '{ teamRuns(first: 1000000) { totalCount } }' }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as ErrorBody;
    expect(body.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT' });
  });

  test('the 20 teams × 10 runs dashboard stays well under the default cost limit', async () => {
    const { errors } = await t.gql(DASHBOARD(20, 10));
    expect(errors).toBeUndefined();
  });

  test('the GraphiQL example query passes every limit', async () => {
    const { errors } = await t.gql(EXAMPLE_QUERY);
    expect(errors).toBeUndefined();
  });

  test('the cost follows the page size given in a variable, request by request', async () => {
    const query = 'query($n: Int) { teamRuns(first: $n) { nodes { execId } } }';
    const big = await t.gql(query, { n: 1_000_000 });
    expect(big.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    // Same document again: a cached verdict must not leak into the next request.
    const small = await t.gql<{ teamRuns: { nodes: unknown[] } }>(query, { n: 3 });
    expect(small.errors).toBeUndefined();
    expect(small.data?.teamRuns.nodes).toHaveLength(3);
  });

  test('a body just under the size limit is read and answered', async () => {
    const padding = 'x'.repeat(1024 * 1024 - 100);
    const response = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }', extensions: { padding } }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });

  test('valid multi-byte UTF-8 passes the strict decoder', async () => {
    const { data, errors } = await t.gql('{ team(name: "ÄÖÜ—日本") { name } }');
    expect(data?.team).toBeNull();
    expect(errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(errors?.[0]?.message).toContain('ÄÖÜ—日本');
  });
});

describe('query cost', () => {
  test('the same document is judged by its variables each time: a cheap page, an over-cost one, then the cheap one again', async () => {
    const query = 'query($n: Int) { teamRuns(first: $n) { totalCount } }';
    const send = async (n: number) =>
      (await t.gql<{ teamRuns: { totalCount: number } }>(query, { n })) as ErrorBody;
    const cheap = await send(5);
    expect(cheap.errors).toBeUndefined();
    const over = await send(1_000_000);
    expect(over.errors?.[0]?.message).toMatch(/exceeds the limit of 200000/);
    expect(over.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await send(5)).data).toEqual(cheap.data);
    expect((await send(1_000_000)).errors?.[0]?.message).toMatch(/exceeds the limit/);
  });
});
