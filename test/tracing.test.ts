import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import type { AgentGraphServer } from '../src/server.js';
import { startTestServer, type TestServer } from './support/server.js';

interface OtlpAttribute {
  readonly key: string;
  readonly value: { stringValue?: string; intValue?: number | string };
}

interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: OtlpAttribute[];
  readonly status?: { code?: number; message?: string };
}

interface OtlpExport {
  readonly resourceSpans: {
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: { spans: OtlpSpan[] }[];
  }[];
}

/** A loopback OTLP/HTTP collector: keeps every body posted to /v1/traces, and its type. */
async function startCollector(): Promise<{
  url: string;
  bodies: string[];
  types: (string | undefined)[];
  server: Server;
}> {
  const bodies: string[] = [];
  const types: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        types.push(req.headers['content-type']);
        bodies.push(Buffer.concat(chunks).toString('utf8'));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, bodies, types, server };
}

/** The call stack with which a GraphQL request reaches the database driver. */
async function driverCallStack(t: TestServer): Promise<string> {
  const raw = t.server.database.driver;
  const query = raw.query.bind(raw);
  let stack = '';
  const spy = vi.spyOn(raw, 'query').mockImplementation((statement, binds) => {
    stack = new Error('probe').stack ?? '';
    return query(statement, binds);
  });
  try {
    await t.post('{ teams(first: 1) { totalCount } }');
  } finally {
    spy.mockRestore();
  }
  return stack;
}

const attribute = (attributes: OtlpAttribute[], key: string) =>
  attributes.find((a) => a.key === key)?.value;

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const UNKNOWN_TEAM = 'NO_SUCH_TEAM_7F3A9C';

describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let t: TestServer;
  let statementNames: string[];
  let wrappedStack: string;

  beforeAll(async () => {
    collector = await startCollector();
    t = await startTestServer({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: 'agent-graph-under-test',
    });
    wrappedStack = await driverCallStack(t);
    const before = await statementsByName(t.server);
    const { errors } = await t.post(
      `query TracedDashboard($team: String!) {
        team(name: $team) { name }
        teams(first: 3) { nodes { name runs(first: 2) { nodes { state tasks { taskName } } } } }
      }`,
      { team: UNKNOWN_TEAM },
      { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` },
    );
    expect(errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const after = await statementsByName(t.server);
    statementNames = [...after.keys()].filter((name) => after.get(name) !== before.get(name));
    // Spans are exported in batches; stopping the server flushes the last one.
    await t.stop();
  });
  afterAll(() => new Promise<void>((resolve) => collector.server.close(() => resolve())));

  const spans = () =>
    collector.bodies.flatMap((body) =>
      (JSON.parse(body) as OtlpExport).resourceSpans.flatMap((r) =>
        r.scopeSpans.flatMap((s) => s.spans.map((span) => ({ ...span, resource: r.resource }))),
      ),
    );

  test('one span per operation, a child of the caller’s trace, named after the operation', () => {
    const operation = spans().find((span) => span.name === 'query TracedDashboard');
    expect(operation).toBeDefined();
    expect(operation?.traceId).toBe(TRACE_ID);
    expect(operation?.parentSpanId).toBe('00f067aa0ba902b7');
    expect(attribute(operation?.attributes ?? [], 'graphql.operation.name')?.stringValue).toBe(
      'TracedDashboard',
    );
    // The first error's code is the status; its message names the team, so it stays out.
    expect(operation?.status).toMatchObject({ code: 2, message: 'NOT_FOUND' });
    expect(attribute(operation?.resource.attributes ?? [], 'service.name')?.stringValue).toBe(
      'agent-graph-under-test',
    );
  });

  test('one span per database round trip, named after its statement, under the operation', () => {
    const all = spans();
    const operation = all.find((span) => span.name === 'query TracedDashboard');
    const children = all.filter((span) => span.parentSpanId === operation?.spanId);
    expect(statementNames.length).toBeGreaterThanOrEqual(4);
    expect(children.map((span) => span.name).sort()).toEqual([...statementNames].sort());
    for (const child of children) {
      expect(child.traceId).toBe(TRACE_ID);
      expect(attribute(child.attributes, 'agentgraph.statement')?.stringValue).toBe(child.name);
      expect(attribute(child.attributes, 'db.system.name')?.stringValue).toBe('postgresql');
    }
  });

  test('spans arrive as OTLP JSON, and no bind value reaches the collector', () => {
    expect(collector.bodies.length).toBeGreaterThan(0);
    expect(new Set(collector.types)).toEqual(new Set(['application/json']));
    for (const body of collector.bodies) expect(body).not.toContain(UNKNOWN_TEAM);
  });

  test('the counted driver calls the database through the tracing wrapper', () => {
    expect(t.server.tracing).toBeDefined();
    expect(wrappedStack).toMatch(/src[/\\]tracing[/\\]otel\.ts/);
  });
});

describe('without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.stop());

  test('nothing is wrapped: the counted driver calls the database driver directly', async () => {
    expect(t.server.tracing).toBeUndefined();
    const stack = await driverCallStack(t);
    expect(stack).toMatch(/src[/\\]db[/\\]driver\.ts/);
    expect(stack).not.toMatch(/src[/\\]tracing[/\\]/);
  });
});

async function statementsByName(server: AgentGraphServer): Promise<Map<string, number>> {
  const { values } = await server.metrics.dbStatements.get();
  return new Map(values.map((v) => [String(v.labels.statement), v.value]));
}
