import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CSRF_HEADER } from '../../src/hardening/index.js';
import { wsUrl } from '../live/support.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { RawSocket } from './raw-ws.js';

const APP = 'https://app.example.com';
const ADMIN = 'https://admin.example.com';
const EVIL = 'https://evil.example';

let open: TestServer;
let locked: TestServer;
let single: TestServer;
beforeAll(async () => {
  [open, locked, single] = await Promise.all([
    startTestServer(),
    startTestServer({ INTROSPECTION: 'false', CORS_ORIGINS: `${APP},${ADMIN}` }),
    startTestServer({ CORS_ORIGINS: APP }),
  ]);
});
afterAll(() => Promise.all([open.stop(), locked.stop(), single.stop()]));

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
  test('a GET query runs with no extra header (GraphiQL subscriptions, urql)', async () => {
    const response = await getQuery(open, '{ agents(first: 1) { totalCount } }');
    expect(response.status).toBe(200);
    expect(((await response.json()) as Body).data).toMatchObject({ agents: { totalCount: 7 } });
  });

  test('a mutation over GET is refused before anything runs, header or not', async () => {
    const headerSets: Record<string, string>[] = [{}, { [CSRF_HEADER]: '1' }];
    for (const headers of headerSets) {
      let response: Response | undefined;
      const statements = await open.countStatements(async () => {
        response = await getQuery(open, 'mutation { respondToHuman }', headers);
      });
      expect(response?.status).toBe(405);
      const body = (await response?.json()) as Body;
      expect(body.errors?.[0]?.message).toMatch(/mutation operation from a POST request/);
      expect(statements).toBe(0);
    }
  });

  test('a POST a browser sends cross-site without asking is refused, saying what to send', async () => {
    const form = new FormData();
    form.set('operations', JSON.stringify({ query: '{ __typename }' }));
    form.set('map', '{}');
    const bodies: [string, RequestInit][] = [
      // What `curl -d '{"query": …}'` sends.
      [
        'content type application/x-www-form-urlencoded',
        {
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: '{"query":"{ __typename }"}',
        },
      ],
      [
        'content type text/plain',
        {
          headers: { 'content-type': 'text/plain;charset=UTF-8' },
          body: '{"query":"{ __typename }"}',
        },
      ],
      ['content type multipart/form-data', { body: form }],
      ['no content type', { body: new Blob(['{"query":"{ __typename }"}']) }],
    ];
    for (const [what, init] of bodies) {
      let response: Response | undefined;
      const statements = await open.countStatements(async () => {
        response = await fetch(`${open.url}/graphql`, { method: 'POST', ...init });
      });
      expect(response?.status, what).toBe(403);
      const body = (await response?.json()) as Body;
      const message = body.errors?.[0]?.message;
      expect(message, what).toContain(`A POST with ${what} is refused`);
      expect(message, what).toContain('"Content-Type: application/json"');
      expect(message, what).toContain(`"${CSRF_HEADER}: 1"`);
      expect(body.errors?.[0]?.extensions?.code, what).toBe('BAD_USER_INPUT');
      expect(statements, what).toBe(0);
    }
  });

  test('with the header, a form-encoded POST is parsed as a form', async () => {
    const response = await fetch(`${open.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', [CSRF_HEADER]: '1' },
      body: `query=${encodeURIComponent('{ __typename }')}`,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });

  test('GraphiQL still works: the page loads, and its JSON POSTs need no header', async () => {
    const page = await fetch(`${open.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<title>agent-graph</title>');
    // Its scripts, styles and editor workers are inlined, not fetched from a CDN.
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)=["']?https?:/);
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

  test('INTROSPECTION=false refuses __schema over graphql-ws too', async () => {
    const raw = await RawSocket.connect(wsUrl(locked.url));
    raw.subscribe('schema', '{ __schema { queryType { name } } }');
    const error = await raw.next((m) => m.type === 'error' && m.id === 'schema');
    const errors = error.payload as NonNullable<Body['errors']>;
    expect(errors[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(errors[0]?.message).toMatch(/introspection has been disabled/);
    raw.terminate();
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

  test('with one listed origin, only that origin is labelled', async () => {
    const allowed = await preflight(single, APP);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(APP);
    expect(allowed.headers.get('vary')).toMatch(/Origin/i);
    for (const origin of [EVIL, ADMIN]) {
      const refused = await preflight(single, origin);
      expect(refused.status, origin).toBe(403);
      expect(refused.headers.get('access-control-allow-origin'), origin).toBeNull();
      const actual = await post(single, '{ __typename }', { origin });
      expect(actual.status, origin).toBe(200);
      expect(actual.headers.get('access-control-allow-origin'), origin).toBeNull();
      expect(actual.headers.get('vary'), origin).toMatch(/Origin/i);
    }
    const labelled = await post(single, '{ __typename }', { origin: APP });
    expect(labelled.headers.get('access-control-allow-origin')).toBe(APP);
  });

  test('a refused preflight says which origin and what to configure', async () => {
    for (const server of [open, locked, single]) {
      const response = await preflight(server, EVIL);
      expect(response.status).toBe(403);
      const body = (await response.json()) as Body;
      expect(body.errors?.[0]?.message).toBe(
        `Cross-origin requests from ${EVIL} are not allowed: add it to CORS_ORIGINS on the server (comma-separated origins) to let pages there call this API`,
      );
      expect(body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
  });

  test('without CORS_ORIGINS no origin is allowed', async () => {
    const response = await preflight(open, APP);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    const actual = await post(open, '{ __typename }', { origin: APP });
    expect(actual.headers.get('access-control-allow-origin')).toBeNull();
  });
});
