import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXAMPLE_QUERY } from '../../src/yoga.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { WAIT_MS } from '../support/wait.js';
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

  test('a chunked body over the limit is answered 413 and its connection closed, not left half-read', async () => {
    // A keep-alive client that has written its whole body (here into the socket's buffers)
    // before the refusal arrives sends its next request on the same connection: the server
    // must either read what is left of the body or close, or that request waits forever.
    const { hostname, port } = new URL(t.url);
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (text: string) => {
      received += text;
    });
    // The server may close while the body is still being written (EPIPE, ECONNRESET).
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve, reject) => {
      socket.once('close', () => resolve());
      AbortSignal.timeout(WAIT_MS).addEventListener('abort', () =>
        reject(new Error('the server neither answered the next request nor closed')),
      );
    });
    await once(socket, 'connect');
    const host = `${hostname}:${port}`;
    socket.write(
      `POST /graphql HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`,
    );
    const chunk = ' '.repeat(64 * 1024);
    for (let sent = 0; sent < 5 * 1024 * 1024; sent += chunk.length) {
      socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    }
    socket.write(`0\r\n\r\nGET /health HTTP/1.1\r\nhost: ${host}\r\n\r\n`);
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received).toMatch(/\r\nconnection: close\r\n/i);
    expect(received).toContain('Request body too large');
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
