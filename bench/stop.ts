/**
 * The stop scenario of `npm run bench`: how long `server.stop()` takes once the last
 * in-flight response is out (a deploy's SIGTERM). It must not wait for keep-alive
 * connections to time out, nor for its drain limit; test/stop.test.ts checks the order of
 * events, this times it. Every round trip is slowed so that a request is in flight.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { createServer } from '../src/server.js';

export interface StopRow {
  /** From the in-flight response's arrival to stop() resolving (target: well under 1 s). */
  readonly afterLastResponseMs: number;
}

export async function runStop(): Promise<StopRow> {
  const config = loadConfig({ PORT: '0', SIMULATE: 'false', EMBEDDED_LATENCY_MS: '400' });
  const server = await createServer(config, pino({ level: 'warn' }));
  const url = await server.start();
  const before = await server.metrics.statementCount();
  const inFlight = fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ agents(first: 3) { totalCount } }' }),
  }).then((response) => response.text());
  while ((await server.metrics.statementCount()) === before) await sleep(5);
  const stopped = server.stop(10_000);
  await inFlight;
  const answeredAt = performance.now();
  await stopped;
  return { afterLastResponseMs: Math.round(performance.now() - answeredAt) };
}
