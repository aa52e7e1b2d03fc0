import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  type A2ACacheResult,
  A2AClient,
  type A2AClientOptions,
  type A2ARequestOutcome,
} from '../../src/a2a/client.js';
import { AppError } from '../../src/errors.js';
import { createLogger } from '../../src/logger.js';
import {
  PASSWORD,
  type SdkTestServer,
  startSdkTestServer,
  UPSTREAM_SECRET,
  USERNAME,
} from './support/sdk-server.js';

let server: SdkTestServer;
beforeAll(async () => {
  server = await startSdkTestServer({ slowMs: 1_500 });
});
afterAll(() => server.stop());

/** Everything a client said: error messages and log lines, to search for secrets. */
const said: string[] = [];
const logger = createLogger(
  { level: 'trace' },
  {
    write: (line: string) => {
      said.push(line);
    },
  },
);

function client(options: Partial<A2AClientOptions> = {}) {
  const outcomes: A2ARequestOutcome[] = [];
  const cache: A2ACacheResult[] = [];
  const instance = new A2AClient({
    baseUrl: server.baseUrl,
    credentials: { username: USERNAME, password: PASSWORD, tokenUrl: server.tokenUrl },
    timeoutMs: 2_000,
    cacheTtlMs: 60_000,
    retries: 2,
    retryDelayMs: 10,
    maxBodyBytes: 1_048_576,
    onRequest: (outcome) => outcomes.push(outcome),
    onCache: (result) => cache.push(result),
    logger,
    ...options,
  });
  return { a2a: instance, outcomes, cache };
}

async function failure(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    said.push(error.message);
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('cards from a server built with @a2a-js/sdk', () => {
  test('a 1.0 card from the SDK card handler', async () => {
    const { a2a, outcomes } = client();
    const card = await a2a.card('V1_TEAM');
    expect(card).toMatchObject({
      name: 'V1_TEAM',
      protocolVersion: '1.0',
      preferredTransport: 'JSONRPC',
      url: 'https://agents.example.com/V1_TEAM/jsonrpc',
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
    });
    expect(card.skills.map((s) => [s.id, s.name])).toEqual([['5001', 'SUMMARIZE_REPORT']]);
    expect(outcomes).toEqual(['token_ok', 'ok']);
    const [request] = server.cardRequests('V1_TEAM');
    expect(request?.authorization).toMatch(/^Bearer tok-/);
  });

  test('a 0.3 card', async () => {
    const card = await client().a2a.card('LEGACY_TEAM');
    expect(card).toMatchObject({
      name: 'LEGACY_TEAM',
      protocolVersion: '0.3.0',
      url: 'https://agents.example.com/LEGACY_TEAM/a2a/v1',
      capabilities: { stateTransitionHistory: true, pushNotifications: true },
      signed: true,
    });
  });

  test('a card the SDK’s 0.3 compatibility router wrote in both shapes', async () => {
    const card = await client().a2a.card('SUPERSET_TEAM');
    expect(card.interfaces.map((i) => i.protocolVersion)).toEqual(['1.0', '1.0', '0.3']);
    expect(card.url).toBe('https://agents.example.com/SUPERSET_TEAM/jsonrpc');
  });

  test('the list endpoint (seed 004)', async () => {
    const listing = await client().a2a.listAgents();
    expect(listing[0]).toEqual({
      name: 'V1_TEAM',
      description: 'V1_TEAM description',
      agentCardUrl: `${server.baseUrl}/agents/V1_TEAM/.well-known/agent-card.json`,
    });
    expect(listing.find((l) => l.name === 'LEGACY_TEAM')?.description).toBeNull();
  });
});

describe('cache', () => {
  test('a second call sends nothing; after the TTL an If-None-Match revalidation gets 304', async () => {
    let clock = 0;
    const { a2a, outcomes, cache } = client({ cacheTtlMs: 300, now: () => clock });
    const first = await a2a.card('V1_TEAM');
    const before = server.cardRequests('V1_TEAM').length;
    expect(await a2a.card('V1_TEAM')).toBe(first);
    expect(server.cardRequests('V1_TEAM').length).toBe(before);

    clock += 299;
    expect(await a2a.card('V1_TEAM')).toBe(first);
    expect(server.cardRequests('V1_TEAM').length).toBe(before);
    clock += 1;
    expect(await a2a.card('V1_TEAM')).toBe(first);
    const requests = server.cardRequests('V1_TEAM');
    expect(requests.length).toBe(before + 1);
    const revalidation = requests.at(-1);
    expect(revalidation?.ifNoneMatch).toMatch(/^W\/".+"$/);
    expect(revalidation?.status).toBe(304);
    expect(outcomes).toEqual(['token_ok', 'ok', 'not_modified']);
    expect(cache).toEqual(['miss', 'hit', 'hit', 'revalidated']);
  });

  test('max-age=0 (no-cache) from the server: revalidated on every call', async () => {
    const { a2a, outcomes } = client();
    await a2a.card('REVALIDATE_TEAM');
    await a2a.card('REVALIDATE_TEAM');
    await a2a.card('REVALIDATE_TEAM');
    expect(server.cardRequests('REVALIDATE_TEAM').map((r) => r.status)).toEqual([200, 304, 304]);
    expect(outcomes).toEqual(['token_ok', 'ok', 'not_modified', 'not_modified']);
  });

  test('no-store: never kept', async () => {
    const { a2a } = client();
    await a2a.card('NO_STORE_TEAM');
    await a2a.card('NO_STORE_TEAM');
    expect(server.cardRequests('NO_STORE_TEAM').map((r) => [r.status, r.ifNoneMatch])).toEqual([
      [200, undefined],
      [200, undefined],
    ]);
  });

  test('A2A_CACHE_TTL_MS=0 keeps nothing, but simultaneous calls still share one fetch', async () => {
    const { a2a } = client({ cacheTtlMs: 0 });
    const before = server.cardRequests('LEGACY_TEAM').length;
    await Promise.all(Array.from({ length: 5 }, () => a2a.card('LEGACY_TEAM')));
    expect(server.cardRequests('LEGACY_TEAM').length).toBe(before + 1);
    await a2a.card('LEGACY_TEAM');
    expect(server.cardRequests('LEGACY_TEAM').length).toBe(before + 2);
    expect(server.cardRequests('LEGACY_TEAM').at(-1)?.ifNoneMatch).toBeUndefined();
  });
});

describe('tokens', () => {
  test('one token for simultaneous first calls', async () => {
    const { a2a, outcomes } = client({ cacheTtlMs: 0 });
    const tokensBefore = server.tokenRequests().length;
    await Promise.all([a2a.card('V1_TEAM'), a2a.card('LEGACY_TEAM'), a2a.listAgents()]);
    expect(server.tokenRequests().length).toBe(tokensBefore + 1);
    expect(outcomes.filter((o) => o === 'token_ok')).toHaveLength(1);
  });

  test('a 401 gets exactly one new token, shared by the requests that saw it', async () => {
    const { a2a, outcomes } = client({ cacheTtlMs: 0 });
    await a2a.card('V1_TEAM');
    server.expireTokens();
    const tokensBefore = server.tokenRequests().length;
    await Promise.all([a2a.card('V1_TEAM'), a2a.card('LEGACY_TEAM')]);
    expect(server.tokenRequests().length).toBe(tokensBefore + 1);
    expect(outcomes.filter((o) => o === 'unauthorized')).toHaveLength(2);
    expect(outcomes.filter((o) => o === 'token_ok')).toHaveLength(2);
  });

  test('a 401 that survives the new token is UNAUTHENTICATED, after one refresh', async () => {
    const { a2a } = client();
    await a2a.card('V1_TEAM');
    const tokensBefore = server.tokenRequests().length;
    const error = await failure(a2a.card('ALWAYS_401_TEAM'));
    expect(error.code).toBe('UNAUTHENTICATED');
    expect(error.message).toBe(
      'The A2A server rejected a newly issued token for the agent card of team "ALWAYS_401_TEAM" (401 twice)',
    );
    expect(server.tokenRequests().length).toBe(tokensBefore + 1);
    expect(server.cardRequests('ALWAYS_401_TEAM')).toHaveLength(2);
  });

  test('A2A_TOKEN alone: a rejected token is UNAUTHENTICATED without a refresh', async () => {
    const { a2a } = client({ token: 'static-secret-token', credentials: undefined });
    const tokensBefore = server.tokenRequests().length;
    const error = await failure(a2a.card('V1_TEAM'));
    expect(error.code).toBe('UNAUTHENTICATED');
    expect(error.message).toContain('rejected A2A_TOKEN');
    expect(server.tokenRequests().length).toBe(tokensBefore);
  });

  test('wrong credentials are UNAUTHENTICATED', async () => {
    const { a2a, outcomes } = client({
      credentials: { username: USERNAME, password: 'wrong-password', tokenUrl: server.tokenUrl },
    });
    const error = await failure(a2a.card('V1_TEAM'));
    expect(error.code).toBe('UNAUTHENTICATED');
    expect(error.message).toBe('The A2A token endpoint rejected A2A_USERNAME/A2A_PASSWORD');
    expect(outcomes).toEqual(['token_error']);
  });

  test('no token at all: the 401 says what to configure', async () => {
    const error = await failure(client({ credentials: undefined }).a2a.card('V1_TEAM'));
    expect(error.code).toBe('UNAUTHENTICATED');
    expect(error.message).toContain('set A2A_TOKEN or A2A_USERNAME/A2A_PASSWORD');
  });

  test('403 is UNAUTHENTICATED', async () => {
    const error = await failure(client().a2a.card('FORBIDDEN_TEAM'));
    expect(error.code).toBe('UNAUTHENTICATED');
    expect(error.message).toContain('(403)');
  });
});

describe('failures', () => {
  test('404 is NOT_FOUND', async () => {
    const { a2a, outcomes } = client();
    const error = await failure(a2a.card('NO_SUCH_TEAM'));
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toBe('The A2A server has no agent card of team "NO_SUCH_TEAM" (404)');
    expect(outcomes).toEqual(['token_ok', 'not_found']);
  });

  test('500: retried A2A_RETRIES times, then UPSTREAM_UNAVAILABLE', async () => {
    const { a2a, outcomes } = client();
    const error = await failure(a2a.card('BROKEN_TEAM'));
    expect(error.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(error.message).toBe(
      'The A2A server answered 500 for the agent card of team "BROKEN_TEAM" (3 attempts)',
    );
    expect(server.cardRequests('BROKEN_TEAM').map((r) => r.status)).toEqual([500, 500, 500]);
    expect(outcomes).toEqual(['token_ok', 'server_error', 'server_error', 'server_error']);
  });

  test('a 503 that clears up on the retry succeeds', async () => {
    server.failNext('FLAKY_TEAM', 1);
    const { a2a, outcomes } = client();
    expect((await a2a.card('FLAKY_TEAM')).name).toBe('FLAKY_TEAM');
    expect(server.cardRequests('FLAKY_TEAM').map((r) => r.status)).toEqual([503, 200]);
    expect(outcomes).toEqual(['token_ok', 'server_error', 'ok']);
  });

  test('a slow answer is TIMEOUT after A2A_TIMEOUT_MS, and not retried', async () => {
    const { a2a, outcomes } = client({ timeoutMs: 400 });
    await a2a.listAgents();
    const error = await failure(a2a.card('SLOW_TEAM'));
    expect(error.code).toBe('TIMEOUT');
    expect(error.message).toBe(
      'The A2A server did not answer within 400 ms for the agent card of team "SLOW_TEAM"',
    );
    expect(server.cardRequests('SLOW_TEAM')).toHaveLength(1);
    expect(outcomes).toEqual(['token_ok', 'ok', 'timeout']);
  });

  test('a malformed body is UPSTREAM_UNAVAILABLE, and not cached', async () => {
    const { a2a, outcomes } = client();
    const error = await failure(a2a.card('MALFORMED_TEAM'));
    expect(error.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(error.message).toBe(
      'The agent card of team "MALFORMED_TEAM" from the A2A server is not valid JSON',
    );
    await failure(a2a.card('MALFORMED_TEAM'));
    expect(server.cardRequests('MALFORMED_TEAM')).toHaveLength(2);
    expect(outcomes).toEqual(['token_ok', 'invalid_body', 'invalid_body']);
  });

  test('a card without required fields names them', async () => {
    const error = await failure(client().a2a.card('INCOMPLETE_TEAM'));
    expect(error.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(error.message).toBe(
      'The agent card of team "INCOMPLETE_TEAM" from the A2A server is invalid (A2A 1.0 shape): version is missing; supportedInterfaces is missing',
    );
  });

  test('an unreachable server: retried, then UPSTREAM_UNAVAILABLE naming the cause', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const { a2a, outcomes } = client({
      baseUrl: `http://127.0.0.1:${port}/adb/a2a/v1/databases/x`,
      token: 'static-secret-token',
      credentials: undefined,
    });
    const error = await failure(a2a.card('ANY_TEAM'));
    expect(error.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(error.message).toBe(
      'The A2A server could not be reached for the agent card of team "ANY_TEAM" (ECONNREFUSED; 3 attempts)',
    );
    expect(outcomes).toEqual(['network_error', 'network_error', 'network_error']);
  });

  test('the upstream’s own text never reaches the message; it is logged', async () => {
    const error = await failure(client().a2a.card('LEAKY_TEAM'));
    expect(error.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(error.message).toBe(
      'The agent card of team "LEAKY_TEAM" from the A2A server is not valid JSON',
    );
    expect(error.message).not.toContain(UPSTREAM_SECRET);
    const logged = said.filter((line) => line.includes('A2A answer unusable'));
    expect(logged.some((line) => line.includes('LEAKY_TEAM'))).toBe(true);
    said.splice(0, said.length, ...said.filter((line) => !line.includes(UPSTREAM_SECRET)));
  });

  test('a network error that is not a code is "network error": fetch’s own text can quote the URL', async () => {
    const { a2a } = client({
      baseUrl: `http://reader:url-password-77@127.0.0.1:1/adb/a2a/v1/databases/x`,
      token: 'static-secret-token',
      credentials: undefined,
      retries: 0,
    });
    const error = await failure(a2a.card('ANY_TEAM'));
    expect(error.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(error.message).toBe(
      'The A2A server could not be reached for the agent card of team "ANY_TEAM" (network error; 1 attempts)',
    );
  });

  test.each([
    ['HUGE_TEAM', 'declared by Content-Length'],
    ['ENDLESS_TEAM', 'streamed without a length'],
  ])(
    'a body over A2A_MAX_BODY_BYTES (%s, %s) is UPSTREAM_UNAVAILABLE, read no further',
    async (team) => {
      const { a2a, outcomes } = client();
      const error = await failure(a2a.card(team));
      expect(error.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(error.message).toBe(
        `The A2A server sent more than A2A_MAX_BODY_BYTES (1048576 bytes) for the agent card of team "${team}"`,
      );
      expect(outcomes).toEqual(['token_ok', 'invalid_body']);
      expect(server.cardRequests(team)).toHaveLength(1);
    },
  );

  test('no message or log line carries a token or the password', () => {
    expect(said.length).toBeGreaterThan(10);
    const secrets = [
      ...server.issuedTokens,
      PASSWORD,
      'static-secret-token',
      'wrong-password',
      'url-password-77',
    ];
    expect(server.issuedTokens.length).toBeGreaterThan(3);
    for (const line of said) {
      for (const secret of secrets) expect(line).not.toContain(secret);
    }
  });
});
