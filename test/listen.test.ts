import { afterEach, describe, expect, test } from 'vitest';
import { type EarlyListener, listenEarly } from '../src/listen.js';

// The port src/main.ts takes before loading the server (issue 36, item 1), over a real socket.
let listener: EarlyListener | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
});

describe('the port taken before the server loads', () => {
  test('says it is starting, then answers the requests it held once the server is ready', async () => {
    listener = await listenEarly({ host: '127.0.0.1', port: 0 });
    const health = await fetch(`${listener.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'starting' });
    const ready = await fetch(`${listener.url}/ready`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBe('1');

    // A client that came early (`npm start & curl …`) waits rather than being refused.
    const early = fetch(`${listener.url}/graphql`, { method: 'POST', body: '{}' });
    const arrived = new Promise<void>((resolve) =>
      listener?.server.once('request', () => resolve()),
    );
    await arrived;
    listener.serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`served ${req.method} ${req.url}`);
    });
    expect(await (await early).text()).toBe('served POST /graphql');
    expect(await (await fetch(`${listener.url}/ready`)).text()).toBe('served GET /ready');
  });

  test('a busy port is one clear error', async () => {
    listener = await listenEarly({ host: '127.0.0.1', port: 0 });
    const port = Number(new URL(listener.url).port);
    await expect(listenEarly({ host: '127.0.0.1', port })).rejects.toThrow(
      `127.0.0.1:${port} is already in use (another agent-graph?): stop what listens there, or set PORT to another port`,
    );
  });
});
