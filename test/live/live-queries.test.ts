import { afterAll, beforeAll, expect, test } from 'vitest';
import { setRunState } from '../../src/db/embedded/simulator.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { embeddedPg, subscribeSse, subscribeWs, wsClient } from './support.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ POLL_INTERVAL_MS: '150' });
});
afterAll(() => t.stop());

interface RunAnswer {
  teamRun: { execId: string; state: string; tasks: { state: string }[] } | null;
}

async function runningRun(): Promise<string> {
  const result = await t.gql<{ teamRuns: { nodes: { execId: string }[] } }>(
    'query { teamRuns(first: 1, filter: { states: [RUNNING] }) { nodes { execId } } }',
  );
  const execId = result.data?.teamRuns.nodes[0]?.execId;
  if (!execId) throw new Error('no running run');
  return execId;
}

test('a live query over graphql-ws and SSE follows a run the poller sees change', async () => {
  const execId = await runningRun();
  const query =
    'query Run($id: ID!) @live { teamRun(execId: $id) { execId state tasks { state } } }';
  const client = wsClient(t.url);
  const ws = subscribeWs<RunAnswer>(client, query, { id: execId });
  const sse = await subscribeSse<RunAnswer>(t.url, query, { id: execId });
  await ws.take(1);
  await sse.take(1);
  expect(ws.data[0]?.teamRun?.state).toBe('RUNNING');
  await setRunState(embeddedPg(t.server), execId, 'WAITING_FOR_HUMAN');
  await ws.until(() => ws.data.at(-1)?.teamRun?.state === 'WAITING_FOR_HUMAN');
  await sse.until(() => sse.data.at(-1)?.teamRun?.state === 'WAITING_FOR_HUMAN');
  console.log(JSON.stringify(ws.events), JSON.stringify(sse.events));
  ws.close();
  sse.close();
  await client.dispose();
});
