import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { metric, wsUrl } from '../live/support.js';
import { rawRequest } from '../support/raw-request.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { hs256Tokens } from '../support/tokens.js';
import { RawSocket } from './raw-ws.js';

const SECRET = 'a-test-secret-that-is-long-enough-for-hs256!';
const APP = 'https://app.example.com';
const EVIL = 'https://evil.example';

let open: TestServer;
let cors: TestServer;
let locked: TestServer;
beforeAll(async () => {
  [open, cors, locked] = await Promise.all([
    startTestServer(),
    startTestServer({ CORS_ORIGINS: APP }),
    startTestServer({ AUTH_JWT_SECRET: SECRET }),
  ]);
});
afterAll(() => Promise.all([open.stop(), cors.stop(), locked.stop()]));

const tokens = hs256Tokens(SECRET);
const adminToken = () => tokens.sign({ roles: ['admin'] });

describe('WebSocket message size (MAX_BODY_BYTES)', () => {
  test('a message over the limit closes the socket with 1009 before it is parsed', async () => {
    const raw = await RawSocket.connect(wsUrl(open.url));
    raw.subscribe('big', `{ __typename } # ${'x'.repeat(1_048_576)}`);
    expect((await raw.close()).code).toBe(1009);
  });

  test('a message under the limit is answered', async () => {
    const raw = await RawSocket.connect(wsUrl(open.url));
    raw.subscribe('small', `{ __typename } # ${'x'.repeat(100_000)}`);
    const next = await raw.next((m) => m.type === 'next');
    expect(next.payload).toEqual({ data: { __typename: 'Query' } });
    raw.terminate();
  });
});

describe('document limits over graphql-ws', () => {
  const deep = `{ teams(first: 1) { nodes { runs(first: 1) { nodes { team { runs(first: 1) { nodes { team { runs(first: 1) { nodes { team { runs(first: 1) { nodes { execId } } } } } } } } } } } } } }`;
  const aliased = `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: team(name: "x") { name }`).join(' ')} }`;
  const directives = `{ __typename ${'@skip(if: false) '.repeat(60)} }`;

  test.each([
    ['depth', deep, /depth/i],
    ['aliases', aliased, /alias/i],
    ['directives', directives, /directive/i],
  ])(
    'a %s violation is an error message with BAD_USER_INPUT; the socket stays open',
    async (_name, query, message) => {
      const raw = await RawSocket.connect(wsUrl(open.url));
      raw.subscribe('bad', query);
      const error = await raw.next((m) => m.type === 'error' && m.id === 'bad');
      const errors = error.payload as { message: string; extensions?: { code?: string } }[];
      expect(errors[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(errors[0]?.message).toMatch(message);
      raw.subscribe('good', '{ __typename }');
      const next = await raw.next((m) => m.type === 'next' && m.id === 'good');
      expect(next.payload).toEqual({ data: { __typename: 'Query' } });
      expect(raw.closed).toBeUndefined();
      raw.terminate();
      // Every line the server wrote was pino's JSON (the test logger parses each one).
      expect(open.logs.some((entry) => JSON.stringify(entry).includes('    at '))).toBe(false);
    },
  );
});

describe('Origin on the WebSocket upgrade', () => {
  test('without CORS_ORIGINS, a page on another origin cannot open a socket', async () => {
    await expect(RawSocket.open(wsUrl(open.url), { origin: EVIL })).rejects.toThrow(/403/);
  });

  test('without CORS_ORIGINS, loopback pages and clients without Origin can', async () => {
    const port = new URL(open.url).port;
    for (const origin of [
      `http://127.0.0.1:${port}`,
      'http://localhost:5173',
      'http://[::1]:3000',
      undefined,
    ]) {
      const raw = await RawSocket.connect(
        wsUrl(open.url),
        {},
        origin === undefined ? {} : { origin },
      );
      raw.terminate();
    }
  });

  test('with CORS_ORIGINS, only a listed origin (or none) may open a socket', async () => {
    (await RawSocket.connect(wsUrl(cors.url), {}, { origin: APP })).terminate();
    (await RawSocket.connect(wsUrl(cors.url))).terminate();
    await expect(RawSocket.open(wsUrl(cors.url), { origin: EVIL })).rejects.toThrow(/403/);
    await expect(
      RawSocket.open(wsUrl(cors.url), { origin: 'http://localhost:5173' }),
    ).rejects.toThrow(/403/);
  });
});

describe('Host in anonymous mode (DNS rebinding)', () => {
  test('a rebound Host is refused over HTTP, before anything runs', async () => {
    const port = new URL(open.url).port;
    let response = { status: 0, body: '' };
    const statements = await open.countStatements(async () => {
      response = await rawRequest(open.url, '/graphql', {
        headers: { host: `evil.example:${port}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ agents(first: 1) { totalCount } }' }),
      });
    });
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body).errors[0].extensions.code).toBe('FORBIDDEN');
    expect(statements).toBe(0);
  });

  test('a rebound Host cannot open a WebSocket, whatever its Origin', async () => {
    const port = new URL(open.url).port;
    await expect(
      RawSocket.open(wsUrl(open.url), {
        host: `evil.example:${port}`,
        origin: `http://evil.example:${port}`,
      }),
    ).rejects.toThrow(/403/);
  });

  test('loopback Host names are served', async () => {
    const port = new URL(open.url).port;
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'localhost']) {
      const response = await rawRequest(open.url, '/graphql', {
        headers: { host, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(response.status, host).toBe(200);
    }
  });

  test('with authentication on, the Host is not checked (a token is needed anyway)', async () => {
    const port = new URL(locked.url).port;
    const response = await rawRequest(locked.url, '/graphql', {
      headers: {
        host: `api.example.com:${port}`,
        'content-type': 'application/json',
        authorization: `Bearer ${await adminToken()}`,
      },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(response.status).toBe(200);
  });
});

describe('GraphQL path variants', () => {
  test.each(['/graphql/', '//graphql', '/graphql/.', '/graphql/./', '/%2Fgraphql', '/GRAPHQL'])(
    '%s is not a way around authentication',
    async (path) => {
      const response = await rawRequest(locked.url, path, {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ teamz }' }),
      });
      expect(response.status).toBe(404);
      expect(response.body).not.toMatch(/teamz|Did you mean|Cannot query/);
    },
  );

  test('a WebSocket upgrade on a variant is refused too', async () => {
    for (const path of ['/graphql/', '//graphql', '/graphql/.']) {
      await expect(
        RawSocket.open(`${wsUrl(locked.url).replace(/\/graphql$/, '')}${path}`),
      ).rejects.toThrow(/400/);
    }
  });

  test('/graphql itself answers 401 without a token, before parsing', async () => {
    const response = await rawRequest(locked.url, '/graphql?x=1', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ teamz }' }),
    });
    expect(response.status).toBe(401);
    expect(JSON.parse(response.body).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(response.body).not.toMatch(/teamz|Did you mean/);
  });

  test('with a token, variants stay 404 and /graphql answers', async () => {
    const authorization = `Bearer ${await adminToken()}`;
    const variant = await rawRequest(locked.url, '/graphql/', {
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(variant.status).toBe(404);
    const canonical = await rawRequest(locked.url, '/graphql', {
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(JSON.parse(canonical.body)).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('401s are logged and counted', () => {
  const failures = (reason: string, transport: string) =>
    metric(locked.server, 'agentgraph_auth_failures_total', { reason, transport });

  test('over HTTP, by reason', async () => {
    const missingBefore = await failures('missing bearer token', 'http');
    const expiredBefore = await failures('invalid token: expired', 'http');
    const expired = await tokens.sign(
      { roles: ['admin'] },
      { expires: Math.floor(Date.now() / 1000) - 60 },
    );
    expect((await locked.post('{ __typename }')).status).toBe(401);
    expect(
      (await locked.post('{ __typename }', {}, { authorization: `Bearer ${expired}` })).status,
    ).toBe(401);
    expect(await failures('missing bearer token', 'http')).toBe(missingBefore + 1);
    expect(await failures('invalid token: expired', 'http')).toBe(expiredBefore + 1);
    const lines = locked.logs.filter((entry) => entry.msg === 'authentication failed');
    expect(lines.at(-1)).toMatchObject({ transport: 'http', reason: 'invalid token: expired' });
    expect(JSON.stringify(lines)).not.toContain(expired);
  });

  test('over WebSocket', async () => {
    const before = await failures('missing bearer token', 'websocket');
    const raw = await RawSocket.open(wsUrl(locked.url));
    raw.send({ type: 'connection_init', payload: {} });
    expect((await raw.close()).code).toBe(4401);
    expect(await failures('missing bearer token', 'websocket')).toBe(before + 1);
  });
});
