/**
 * Hostile requests and what the server must answer, shared by test/security/abuse.test.ts
 * (which asserts the answers) and bench/abuse.ts (which times them).
 */

export interface AbuseCase {
  readonly name: string;
  readonly send: (url: string) => Promise<Response>;
  readonly status: number;
  readonly code: 'BAD_USER_INPUT';
  /** A part of the error message that names the limit. */
  readonly message: RegExp;
}

const postJson = (url: string, body: BodyInit, headers: Record<string, string> = {}) =>
  fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });

const postQuery = (url: string, query: string, variables?: Record<string, unknown>) =>
  postJson(url, JSON.stringify({ query, variables }));

/** Team → runs → run → team …, `levels` times: three selection levels each. */
function nested(levels: number): string {
  return `{ team(name: "ORDER_SUPPORT_TEAM") { ${'runs(first: 1) { nodes { team { '.repeat(levels)} name ${'} } } '.repeat(levels)}} }`;
}

const FIVE_MB = 5 * 1024 * 1024;

export const DASHBOARD = (teams: number, runs: number) => `{
  teams(first: ${teams}) { edges { node { name tools { name }
    runs(first: ${runs}) { edges { node { state tasks { taskName agent { name }
      toolCalls { toolName } } } } } } } }
}`;

export const ABUSE_CASES: readonly AbuseCase[] = [
  {
    name: 'depth-50 document',
    // 1 (team) + 16 × 3 + 1 (name) = 50 levels.
    send: (url) => postQuery(url, nested(16)),
    status: 200,
    code: 'BAD_USER_INPUT',
    message: /depth limit of 12/,
  },
  {
    name: '10,000 aliases',
    send: (url) =>
      postQuery(
        url,
        `{ ${Array.from({ length: 10_000 }, (_, i) => `a${i}: agents(first: 1) { totalCount }`).join(' ')} }`,
      ),
    status: 200,
    code: 'BAD_USER_INPUT',
    message: /Token limit of 1000/,
  },
  {
    name: '16 aliases (under the token limit)',
    send: (url) =>
      postQuery(
        url,
        `{ ${Array.from({ length: 16 }, (_, i) => `a${i}: team(name: "ORDER_SUPPORT_TEAM") { name }`).join(' ')} }`,
      ),
    status: 200,
    code: 'BAD_USER_INPUT',
    message: /Aliases limit of 15/,
  },
  {
    name: 'first: 1000000',
    send: (url) => postQuery(url, '{ teamRuns(first: 1000000) { nodes { execId } } }'),
    status: 200,
    code: 'BAD_USER_INPUT',
    message: /exceeds the limit of 200000/,
  },
  {
    name: 'first: 1000000 in a variable',
    send: (url) =>
      postQuery(url, 'query($n: Int) { teamRuns(first: $n) { totalCount } }', { n: 1_000_000 }),
    status: 200,
    code: 'BAD_USER_INPUT',
    message: /exceeds the limit of 200000/,
  },
  {
    name: 'over-cost query (100 teams × 100 runs × tasks × tool calls)',
    send: (url) => postQuery(url, DASHBOARD(100, 100)),
    status: 200,
    code: 'BAD_USER_INPUT',
    message: /Query cost 1441501 exceeds the limit of 200000/,
  },
  {
    name: '5 MB body with Content-Length',
    send: (url) =>
      postJson(url, JSON.stringify({ query: '{ __typename }', padding: 'x'.repeat(FIVE_MB) })),
    status: 413,
    code: 'BAD_USER_INPUT',
    message: /too large/,
  },
  {
    name: '5 MB body, chunked (no Content-Length)',
    send: (url) => {
      const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= FIVE_MB) return controller.close();
          sent += chunk.byteLength;
          controller.enqueue(chunk);
        },
      });
      return fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit);
    },
    status: 413,
    code: 'BAD_USER_INPUT',
    message: /too large/,
  },
  {
    name: 'deeply nested fragment cycle',
    send: (url) => {
      const fragments = Array.from(
        { length: 30 },
        (_, i) =>
          `fragment F${i} on Team { runs(first: 1) { nodes { team { ...F${(i + 1) % 30} } } } }`,
      );
      return postQuery(url, `{ teams(first: 1) { nodes { ...F0 } } } ${fragments.join(' ')}`);
    },
    status: 200,
    code: 'BAD_USER_INPUT',
    message: /depth limit of 12/,
  },
  {
    name: 'shallow fragment cycle',
    send: (url) =>
      postQuery(
        url,
        '{ teams(first: 1) { nodes { ...A } } } fragment A on Team { ...B } fragment B on Team { ...A }',
      ),
    status: 200,
    code: 'BAD_USER_INPUT',
    message: /Cannot spread fragment "A" within itself/,
  },
  {
    name: 'invalid UTF-8 in the body',
    send: (url) =>
      postJson(
        url,
        new Uint8Array([
          ...new TextEncoder().encode('{"query":"{ team(name: \\"'),
          0xc3,
          0x28,
          0xff,
          ...new TextEncoder().encode('\\") { name } }"}'),
        ]),
      ),
    status: 400,
    code: 'BAD_USER_INPUT',
    message: /not valid UTF-8/,
  },
  {
    name: '60 directives',
    send: (url) => postQuery(url, `{ __typename ${'@include(if: true) '.repeat(60)}}`),
    status: 200,
    code: 'BAD_USER_INPUT',
    message: /Directives limit of 50/,
  },
];
