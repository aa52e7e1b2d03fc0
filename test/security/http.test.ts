import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CSRF_HEADER } from '../../src/hardening/index.js';
import { startTestServer, type TestServer } from '../support/server.js';

const APP = 'https://app.example.com';
const ADMIN = 'https://admin.example.com';
const EVIL = 'https://evil.example';

let open: TestServer;
let locked: TestServer;
beforeAll(async () => {
  [open, locked] = await Promise.all([
    startTestServer(),
    startTestServer({ INTROSPECTION: 'false', CORS_ORIGINS: `${APP},${ADMIN}` }),
  ]);
});
afterAll(() => Promise.all([open.stop(), locked.stop()]));

interface Body {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

const post = (server: TestServer, query: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });

const getQuery = (server: TestServer, query: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/graphql?query=${encodeURIComponent(query)}`, {
    headers: { accept: 'application/json', ...headers },
  });

describe('CSRF prevention', () => {
  test('a GET query without the CSRF header is refused without running', async () => {
    let response: Response | undefined;
    const statements = await open.countStatements(async () => {
      response = await getQuery(open, '{ agents(first: 1) { totalCount } }');
    });
    expect(response?.status).toBe(403);
    const body = (await response?.json()) as Body;
    expect(body.errors?.[0]?.message).toMatch(/CSRF/);
    expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(statements).toBe(0);
  });

  test('a GET query with the header runs', async () => {
    const response = await getQuery(open, '{ agents(first: 1) { totalCount } }', {
      [CSRF_HEADER]: '1',
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as Body).data).toMatchObject({ agents: {} });
  });

  test('a form-encoded POST without the header is refused', async () => {
    const response = await fetch(`${open.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `query=${encodeURIComponent('{ __typename }')}`,
    });
    expect(response.status).toBe(403);
  });

  test('a multipart POST without the header is refused', async () => {
    const form = new FormData();
    form.set('operations', JSON.stringify({ query: '{ __typename }' }));
    form.set('map', '{}');
    const response = await fetch(`${open.url}/graphql`, { method: 'POST', body: form });
    expect(response.status).toBe(403);
  });

  test('GraphiQL still works: the page loads, and its JSON POSTs need no header', async () => {
    const page = await fetch(`${open.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('agent-graph');
    // GraphiQL's fetcher POSTs application/json, which browsers always preflight.
    const introspection = await post(open, getIntrospectionQuery({ descriptions: true }));
    expect(introspection.status).toBe(200);
    const body = (await introspection.json()) as Body;
    expect(body.errors).toBeUndefined();
    expect(body.data?.__schema).toBeDefined();
  });
});

describe('introspection and field suggestions', () => {
  test('enabled by default, with suggestions for a mistyped field', async () => {
    const schema = (await (await post(open, '{ __schema { queryType { name } } }')).json()) as Body;
    expect(schema.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
    const typo = (await (await post(open, '{ teamz { totalCount } }')).json()) as Body;
    expect(typo.errors?.[0]?.message).toMatch(/Did you mean "team"/);
  });

  test('INTROSPECTION=false refuses __schema and __type', async () => {
    for (const query of [
      '{ __schema { queryType { name } } }',
      '{ __type(name: "Team") { fields { name } } }',
      getIntrospectionQuery(),
    ]) {
      const response = await post(locked, query);
      const body = (await response.json()) as Body;
      expect(body.data ?? null, query).toBeNull();
      expect(body.errors?.[0]?.extensions?.code, query).toBe('BAD_USER_INPUT');
      expect(body.errors?.[0]?.message, query).toMatch(/introspection has been disabled/);
    }
  });

  test('INTROSPECTION=false still answers __typename', async () => {
    const body = (await (await post(locked, '{ __typename }')).json()) as Body;
    expect(body).toEqual({ data: { __typename: 'Query' } });
  });

  test('INTROSPECTION=false gives no suggestions for fields, arguments or enum values', async () => {
    const cases: [string, Record<string, unknown>?][] = [
      ['{ teamz { totalCount } }'],
      ['{ teams(frist: 1) { totalCount } }'],
      ['{ teamRuns(filter: { states: [RUNNIN] }) { totalCount } }'],
      [
        'query($s: [TeamRunState!]) { teamRuns(filter: { states: $s }) { totalCount } }',
        { s: ['RUNNIN'] },
      ],
    ];
    for (const [query, variables] of cases) {
      const response = await fetch(`${locked.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      const text = await response.text();
      const body = JSON.parse(text) as Body;
      expect(body.errors?.[0]?.extensions?.code, query).toBe('BAD_USER_INPUT');
      expect(text, query).not.toMatch(/Did you mean|"team"|"teams"|"first"|"RUNNING"/);
    }
  });
});

describe('CORS', () => {
  const preflight = (server: TestServer, origin: string) =>
    fetch(`${server.url}/graphql`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, authorization',
      },
    });

  test('a listed origin passes the preflight', async () => {
    for (const origin of [APP, ADMIN]) {
      const response = await preflight(locked, origin);
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe(origin);
      expect(response.headers.get('access-control-allow-methods')).toMatch(/POST/);
      expect(response.headers.get('access-control-allow-headers')).toMatch(/authorization/);
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });

  test('an unlisted origin does not', async () => {
    const response = await preflight(locked, EVIL);
    expect(response.headers.get('access-control-allow-origin')).not.toBe(EVIL);
    expect(response.headers.get('access-control-allow-origin')).not.toBe('*');
  });

  test('an actual cross-origin request is labelled only for a listed origin', async () => {
    const allowed = await post(locked, '{ __typename }', { origin: APP });
    expect(allowed.headers.get('access-control-allow-origin')).toBe(APP);
    expect(allowed.headers.get('vary')).toMatch(/Origin/i);
    const refused = await post(locked, '{ __typename }', { origin: EVIL });
    expect(refused.headers.get('access-control-allow-origin')).not.toBe(EVIL);
  });

  test('without CORS_ORIGINS no origin is allowed', async () => {
    const response = await preflight(open, APP);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    const actual = await post(open, '{ __typename }', { origin: APP });
    expect(actual.headers.get('access-control-allow-origin')).toBeNull();
  });
});
