/**
 * One executor (src/compiled-queries.ts): queries, mutations and the executions of
 * subscription events run on it, so a resolver wrapper written once (as a tracing or
 * authorisation plugin adds one) runs on every path, and cancellation reaches resolvers one
 * way on every path: the operation's stop in its context (`context.usage.stopped`, and its
 * signal), which the timeout aborts (hardening/request-timeout.ts).
 */
import { randomUUID } from 'node:crypto';
import {
  defaultFieldResolver,
  GraphQLError,
  type GraphQLFieldResolver,
  type GraphQLObjectType,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Context } from '../src/context.js';
import { startRun } from '../src/db/embedded/simulator.js';
import { schema } from '../src/schema/index.js';
import {
  embeddedPg,
  type Recorder,
  settled,
  subscribeWs,
  until,
  wsClient,
} from './live/support.js';
import { startTestServer, type TestServer } from './support/server.js';
import { WAIT_MS } from './support/wait.js';

const TEAM = 'REPORT_SUMMARY_AGENT_TEAM';

interface Seen {
  readonly operation: string;
  readonly field: string;
  readonly signal: boolean;
  /** Whether the signal had aborted by the time the resolver settled, and with what code. */
  readonly abortedWith: string | null;
}

/**
 * Wraps the resolvers of these fields before any server builds its schema from `schema`:
 * each call records what its resolver saw of the operation's signal.
 */
function wrapResolvers(fields: readonly string[], seen: Seen[]): void {
  for (const path of fields) {
    const [typeName, fieldName] = path.split('.') as [string, string];
    const field = (schema.getType(typeName) as GraphQLObjectType).getFields()[fieldName];
    if (!field) throw new Error(`no field ${path}`);
    const resolve: GraphQLFieldResolver<unknown, Context> = field.resolve ?? defaultFieldResolver;
    field.resolve = async (source, args, context: Context, info) => {
      const signal = context.usage.stopped?.signal;
      try {
        return await resolve(source, args, context, info);
      } finally {
        const reason = signal?.aborted ? signal.reason : null;
        seen.push({
          operation: info.operation.operation,
          field: path,
          signal: signal instanceof AbortSignal,
          abortedWith:
            reason instanceof GraphQLError ? String(reason.extensions.code) : reason && 'other',
        });
      }
    };
  }
}

const seen: Seen[] = [];
wrapResolvers(['Query.teamRuns', 'Mutation.respondToHuman', 'Subscription.teamRunChanged'], seen);

const QUERY = '{ teamRuns(first: 2) { totalCount nodes { execId tasks { taskName } } } }';
const MUTATION = 'mutation { respondToHuman(execId: "NO_SUCH_RUN", response: "yes") { execId } }';
const SUBSCRIPTION = `subscription { teamRunChanged(filter: { teamName: "${TEAM}" }) {
  state run { execId tasks { taskName } } } }`;

type Change = { teamRunChanged: { run: { execId: string } } | null };

/** A query, a mutation and one subscription event on `t`, with what each answered. */
async function eachPath(t: TestServer) {
  const query = await t.gql(QUERY);
  const mutation = await t.gql(MUTATION);
  const client = wsClient(t.url);
  let changes: Recorder<Change> | undefined;
  try {
    changes = subscribeWs<Change>(client, SUBSCRIPTION);
    await settled(t.server, 1);
    await startRun(embeddedPg(t.server), {
      owner: 'APP_USER',
      teamName: TEAM,
      execId: randomUUID().replaceAll('-', '').toUpperCase(),
    });
    await changes.take(1);
    return { query, mutation, event: changes.events[0] };
  } finally {
    changes?.close();
    await client.dispose();
  }
}

const paths = () =>
  ['query', 'mutation', 'subscription'].map((operation) =>
    seen.filter((entry) => entry.operation === operation),
  );

describe('one executor', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ POLL_INTERVAL_MS: '100' });
  });
  afterAll(() => t.stop());

  test('a resolver wrapper written once runs on every path, and sees the operation’s signal there', async () => {
    seen.length = 0;
    const { query, mutation, event } = await eachPath(t);
    expect(query.errors).toBeUndefined();
    expect(mutation.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(event?.errors).toBeUndefined();
    expect(event?.data?.teamRunChanged?.run.execId).toEqual(expect.any(String));
    for (const [i, entries] of paths().entries()) {
      expect(entries.length, ['query', 'mutation', 'subscription'][i]).toBeGreaterThan(0);
      for (const entry of entries) expect(entry).toMatchObject({ signal: true, abortedWith: null });
    }
  });
});

describe('cancellation', () => {
  const LATENCY_MS = 400;
  let t: TestServer;
  beforeAll(async () => {
    // Every round trip takes 400 ms; no operation that touches the database may take 200.
    t = await startTestServer({
      POLL_INTERVAL_MS: '100',
      EMBEDDED_LATENCY_MS: String(LATENCY_MS),
      REQUEST_TIMEOUT_MS: '200',
    });
  });
  afterAll(() => t.stop());

  test('a timed-out query, mutation and subscription event each answer TIMEOUT, and their resolvers see the signal aborted', async () => {
    seen.length = 0;
    const { query, mutation, event } = await eachPath(t);
    expect(query.errors?.[0]?.extensions?.code).toBe('TIMEOUT');
    expect(mutation.errors?.[0]?.extensions?.code).toBe('TIMEOUT');
    expect(event?.errors?.[0]?.extensions?.code).toBe('TIMEOUT');
    // Each resolver settles once its statement in flight comes back, the signal aborted.
    await until(
      () => paths().every((entries) => entries.length > 0),
      WAIT_MS,
      'the resolvers of every path to settle',
    );
    for (const entries of paths()) {
      expect(entries.length).toBeGreaterThan(0);
      for (const entry of entries) {
        expect(entry).toMatchObject({ signal: true, abortedWith: 'TIMEOUT' });
      }
    }
  });
});
