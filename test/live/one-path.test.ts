import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { EmbeddedPg } from '../../src/db/embedded/database.js';
import { setRunState, startRun } from '../../src/db/embedded/simulator.js';
import { RawSocket } from '../security/raw-ws.js';
import { startTestServer, type TestServer } from '../support/server.js';
import {
  activeSubscriptions,
  embeddedPg,
  metric,
  settled,
  subscribeSse,
  until,
  wsUrl,
} from './support.js';

/**
 * The one path every subscription event takes (src/subscription-events.ts): whatever the
 * transport, and whether graphql-ws's events are written past the iterator chain
 * (src/transport/shared-delivery.ts) or through it, a subscriber receives the same result,
 * executed once for its group, with the event's own request id and statement count.
 */
const TEAM = 'REPORT_SUMMARY_AGENT_TEAM';
const SMALL = `subscription Small($team: String) {
  teamRunChanged(filter: { teamName: $team }) { state run { execId tasks { taskName } } } }`;
/** Over MAX_RESPONSE_BYTES (1024 here) for every event: each is the size error instead. */
const LARGE = `subscription Large($team: String) { teamRunChanged(filter: { teamName: $team }) {
  ${Array.from({ length: 10 }, (_, i) => `r${i}: run { execId teamName owner state startDate }`).join(' ')} } }`;

let t: TestServer;
let pg: EmbeddedPg;
beforeAll(async () => {
  t = await startTestServer({
    POLL_INTERVAL_MS: '100',
    MAX_RESPONSE_BYTES: '1024',
    LOG_LEVEL: 'debug',
  });
  pg = embeddedPg(t.server);
});
afterAll(() => t.stop());

const eventLines = (operation: string) =>
  t.logs.filter((line) => line.msg === 'subscription event' && line.operation === operation);

describe('one path for every event', () => {
  test('SSE and WebSocket subscribers get the same result for an event, errors included, executed once', async () => {
    const before = await activeSubscriptions(t.server);
    const raw = await RawSocket.connect(wsUrl(t.url));
    raw.subscribe('small', SMALL, { team: TEAM });
    raw.subscribe('large', LARGE, { team: TEAM });
    const small = await subscribeSse<unknown>(t.url, SMALL, { team: TEAM });
    const large = await subscribeSse<unknown>(t.url, LARGE, { team: TEAM });
    await settled(t.server, before + 4);
    const smallLines = eventLines('Small').length;
    const largeLines = eventLines('Large').length;
    const sizeErrors = await metric(t.server, 'agentgraph_graphql_errors_total', {
      code: 'BAD_USER_INPUT',
    });

    const execId = randomUUID().replaceAll('-', '').toUpperCase();
    await startRun(pg, { owner: 'APP_USER', teamName: TEAM, execId });
    const next = (id: string) => raw.next((m) => m.type === 'next' && m.id === id);
    const [wsSmall, wsLarge] = await Promise.all([next('small'), next('large')]);
    const [sseSmall, sseLarge] = await Promise.all([small.take(1), large.take(1)]).then(() =>
      [small, large].map((recorder) => {
        const { at: _at, ...event } = recorder.events[0] ?? { at: 0 };
        return event;
      }),
    );

    // The same result over both transports, in the same order of keys.
    expect(JSON.stringify(wsSmall.payload)).toContain(execId);
    expect(JSON.stringify(wsSmall.payload)).toBe(JSON.stringify(sseSmall));
    expect(JSON.stringify(wsLarge.payload)).toMatch(/exceeds MAX_RESPONSE_BYTES \(1024\)/);
    expect(JSON.stringify(wsLarge.payload)).toBe(JSON.stringify(sseLarge));

    // One execution, one log line, one counted error for each group of two subscribers.
    await until(
      () => eventLines('Small').length > smallLines && eventLines('Large').length > largeLines,
    );
    expect(eventLines('Small').length - smallLines).toBe(1);
    expect(eventLines('Large').length - largeLines).toBe(1);
    expect(
      await metric(t.server, 'agentgraph_graphql_errors_total', { code: 'BAD_USER_INPUT' }),
    ).toBe(sizeErrors + 1);
    expect(eventLines('Large').at(-1)?.outcome).toBe('BAD_USER_INPUT');
    raw.terminate();
    small.close();
    large.close();
    await until(async () => (await activeSubscriptions(t.server)) === before);
  });

  test('each event has its own request id and counts its own statements', async () => {
    const before = await activeSubscriptions(t.server);
    const sse = await subscribeSse<unknown>(
      t.url,
      SMALL,
      { team: TEAM },
      { 'x-request-id': 'subscribe-1' },
    );
    await settled(t.server, before + 1);
    const seen = eventLines('Small').length;
    const execId = randomUUID().replaceAll('-', '').toUpperCase();
    await startRun(pg, { owner: 'APP_USER', teamName: TEAM, execId });
    await sse.take(1);
    await setRunState(pg, execId, 'WAITING_FOR_HUMAN');
    await sse.take(2);
    await until(() => eventLines('Small').length >= seen + 2);
    const [first, second] = eventLines('Small').slice(seen);
    expect(first?.requestId).toEqual(expect.any(String));
    expect(new Set([first?.requestId, second?.requestId, 'subscribe-1']).size).toBe(3);
    // `run { tasks }`: the run comes with the event, its tasks are one statement per event.
    expect(first?.statements).toBe(1);
    expect(second?.statements).toBe(1);
    sse.close();
  });
});
