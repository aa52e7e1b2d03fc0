import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { metric } from '../live/support.js';
import { type RawAnswer, rawRequest } from '../support/raw-request.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { hs256Tokens } from '../support/tokens.js';

/**
 * The refusals answered before yoga parses a request (src/server.ts, src/auth/plugin.ts,
 * src/hardening/cross-origin.ts), as a client reads them over the socket: each goes through
 * maskedReply (src/masking.ts), so it has the GraphQL error shape, a JSON content type and
 * one count in agentgraph_graphql_errors_total.
 */

const SECRET = 'a-test-secret-that-is-long-enough-for-hs256!';
const APP = 'https://app.example.com';
const EVIL = 'https://evil.example';

let open: TestServer;
let locked: TestServer;
beforeAll(async () => {
  [open, locked] = await Promise.all([
    startTestServer({ CORS_ORIGINS: APP }),
    startTestServer({ AUTH_JWT_SECRET: SECRET, CORS_ORIGINS: APP }),
  ]);
});
afterAll(() => Promise.all([open.stop(), locked.stop()]));

const raw = (server: TestServer, path: string, options?: Parameters<typeof rawRequest>[2]) =>
  rawRequest(server.url, path, options);

const errorsCounted = (server: TestServer, code?: string) =>
  metric(server.server, 'agentgraph_graphql_errors_total', code ? { code } : {});

/** The answer to `send`, and how the error counter moved meanwhile (all codes, and `code`). */
async function refused(server: TestServer, code: string, send: () => Promise<RawAnswer>) {
  const [allBefore, codeBefore] = [await errorsCounted(server), await errorsCounted(server, code)];
  const answer = await send();
  return {
    ...answer,
    json: JSON.parse(answer.body) as unknown,
    counted: (await errorsCounted(server)) - allBefore,
    countedAs: (await errorsCounted(server, code)) - codeBefore,
  };
}

const QUERY = JSON.stringify({ query: '{ agents(first: 1) { totalCount } }' });
const JSON_TYPE = 'application/json; charset=utf-8';

describe('each refusal before yoga: its body, status and code, counted once', () => {
  test('an unknown path: 404 NOT_FOUND, saying where GraphQL is', async () => {
    for (const path of ['/graphql/', '//graphql', '/nothing']) {
      const answer = await refused(open, 'NOT_FOUND', () => raw(open, path, { body: QUERY }));
      expect(answer.status, path).toBe(404);
      expect(answer.headers['content-type'], path).toBe(JSON_TYPE);
      expect(answer.headers['cache-control'], path).toBe('no-store');
      expect(answer.json, path).toEqual({
        errors: [
          {
            message: 'Not found: GraphQL is served at /graphql',
            extensions: { code: 'NOT_FOUND' },
          },
        ],
      });
      expect([answer.counted, answer.countedAs], path).toEqual([1, 1]);
    }
  });

  test('a rebound Host in anonymous mode: 403 FORBIDDEN, naming DNS rebinding', async () => {
    const port = new URL(open.url).port;
    const answer = await refused(open, 'FORBIDDEN', () =>
      raw(open, '/graphql', {
        headers: { host: `evil.example:${port}`, 'content-type': 'application/json' },
        body: QUERY,
      }),
    );
    expect(answer.status).toBe(403);
    expect(answer.headers['content-type']).toBe(JSON_TYPE);
    expect(answer.json).toEqual({
      errors: [
        {
          message:
            'This Host is not served: without authentication only loopback names are (DNS rebinding)',
          extensions: { code: 'FORBIDDEN' },
        },
      ],
    });
    expect([answer.counted, answer.countedAs]).toEqual([1, 1]);
  });

  test('a preflight from an unlisted origin: 403 FORBIDDEN, with or without authentication', async () => {
    for (const server of [open, locked]) {
      const answer = await refused(server, 'FORBIDDEN', () =>
        raw(server, '/graphql', {
          method: 'OPTIONS',
          headers: {
            origin: EVIL,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'content-type',
          },
        }),
      );
      expect(answer.status).toBe(403);
      expect(answer.headers['content-type']).toBe(JSON_TYPE);
      expect(answer.headers['access-control-allow-origin']).toBeUndefined();
      expect(answer.json).toEqual({
        errors: [
          {
            message: `Cross-origin requests from ${EVIL} are not allowed: add it to CORS_ORIGINS on the server (comma-separated origins) to let pages there call this API`,
            extensions: { code: 'FORBIDDEN' },
          },
        ],
      });
      expect([answer.counted, answer.countedAs]).toEqual([1, 1]);
    }
  });

  test('no token, or a bad one: 401 UNAUTHENTICATED with WWW-Authenticate, also an auth failure', async () => {
    const wrong = await hs256Tokens('another-secret-that-is-long-enough-for-hs256').sign({
      roles: ['admin'],
    });
    const cases: [string, Record<string, string>, RegExp][] = [
      ['no token', {}, /^missing bearer token/],
      ['a bad signature', { authorization: `Bearer ${wrong}` }, /signature/],
    ];
    for (const [what, headers, message] of cases) {
      const failuresBefore = await metric(locked.server, 'agentgraph_auth_failures_total');
      const answer = await refused(locked, 'UNAUTHENTICATED', () =>
        raw(locked, '/graphql', {
          headers: { 'content-type': 'application/json', ...headers },
          body: QUERY,
        }),
      );
      expect(answer.status, what).toBe(401);
      expect(answer.headers['content-type'], what).toBe(JSON_TYPE);
      expect(answer.headers['www-authenticate'], what).toBe('Bearer');
      const { errors } = answer.json as { errors: { message: string; extensions: object }[] };
      expect(errors, what).toHaveLength(1);
      expect(errors[0]?.message, what).toMatch(message);
      expect(errors[0]?.extensions, what).toEqual({ code: 'UNAUTHENTICATED' });
      expect([answer.counted, answer.countedAs], what).toEqual([1, 1]);
      expect(
        (await metric(locked.server, 'agentgraph_auth_failures_total')) - failuresBefore,
        what,
      ).toBe(1);
    }
  });

  test('a WebSocket upgrade from an unlisted origin or a rebound Host: 403 FORBIDDEN, the same bodies', async () => {
    const port = new URL(open.url).port;
    const upgrade = {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      'sec-websocket-protocol': 'graphql-transport-ws',
    };
    const cases: [string, Record<string, string>, string][] = [
      [
        'an unlisted origin',
        { origin: EVIL },
        `Cross-origin requests from ${EVIL} are not allowed: add it to CORS_ORIGINS on the server (comma-separated origins) to let pages there call this API`,
      ],
      [
        'a rebound Host',
        { host: `evil.example:${port}`, origin: `http://evil.example:${port}` },
        'This Host is not served: without authentication only loopback names are (DNS rebinding)',
      ],
    ];
    for (const [what, headers, message] of cases) {
      const answer = await refused(open, 'FORBIDDEN', () =>
        raw(open, '/graphql', { method: 'GET', headers: { ...upgrade, ...headers } }),
      );
      expect(answer.status, what).toBe(403);
      expect(answer.headers['content-type'], what).toBe(JSON_TYPE);
      expect(answer.json, what).toEqual({
        errors: [{ message, extensions: { code: 'FORBIDDEN' } }],
      });
      expect([answer.counted, answer.countedAs], what).toEqual([1, 1]);
    }
  });

  test('what is served is not counted as an error', async () => {
    const before = await errorsCounted(open);
    const answers = await Promise.all([
      raw(open, '/health', { method: 'GET' }),
      raw(open, '/graphql', { headers: { 'content-type': 'application/json' }, body: QUERY }),
      raw(open, '/graphql', { method: 'OPTIONS', headers: { origin: APP } }),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 204]);
    expect((await errorsCounted(open)) - before).toBe(0);
  });
});
