import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestServer, type TestServer } from './support/server.js';

// What a new user sees on a first `npm start`: the real process, with an empty cache (so it
// seeds) and, here, its port already taken.

let blocker: Server;
let port: number;
let cacheDir: string;
beforeAll(async () => {
  cacheDir = await mkdtemp(join(tmpdir(), 'agent-graph-first-start-'));
  blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  port = (blocker.address() as { port: number }).port;
});
afterAll(async () => {
  blocker.close();
  await rm(cacheDir, { recursive: true, force: true });
});

/**
 * `npm start`'s command with `env`; resolves once it has exited, stopping it (SIGTERM) when it
 * logs that it is ready.
 */
function start(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/run.mjs', 'src/main.ts'], {
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    let stdout = '';
    let stderr = '';
    let stopping = false;
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (!stopping && /"msg":"agent-graph ready at/.test(stdout)) stopping = child.kill('SIGTERM');
    });
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const logLines = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map(
      (line) => JSON.parse(line) as { msg: string; ms?: number; url?: string; initdb?: boolean },
    );

describe('first start', () => {
  test('a port in use is one line and exit 1, before any loading or seeding', async () => {
    const { code, stdout, stderr } = await start({
      PORT: String(port),
      EMBEDDED_CACHE_DIR: cacheDir,
      SIMULATE: 'false',
    });
    expect(stderr).toBe(
      `agent-graph: 127.0.0.1:${port} is already in use (another agent-graph?): stop what listens there, or set PORT to another port\n`,
    );
    expect(stdout).toBe('');
    expect(code).toBe(1);
  });

  test('says first where it listens, then that it is seeding and how long that took', async () => {
    const { code, stdout } = await start({
      PORT: '0',
      EMBEDDED_CACHE_DIR: cacheDir,
      SIMULATE: 'false',
    });
    const logs = logLines(stdout);
    expect(logs[0]?.msg).toMatch(
      /^agent-graph starting on http:\/\/127\.0\.0\.1:\d+: loading the server and the embedded database$/,
    );
    expect(logs[1]?.msg).toBe(
      'first start: seeding the embedded demo database, once (5-20 s; later starts load a snapshot of it in a few seconds)',
    );
    const seeded = logs.find((entry) => entry.msg.startsWith('embedded database seeded in'));
    expect(seeded?.msg).toMatch(
      /^embedded database seeded in \d+\.\d s; snapshot saved for later starts$/,
    );
    expect(seeded?.ms).toBeGreaterThan(0);
    // Nothing cached, so initdb made the empty cluster (the cached one's path: embedded-cache).
    expect(seeded?.initdb).toBe(true);
    const ready = logs.find((entry) => entry.msg.startsWith('agent-graph ready at'));
    const base = logs[0]?.url;
    expect(ready?.msg).toBe(
      `agent-graph ready at ${base}/graphql (GraphiQL); the operators' console at ${base}/console`,
    );
    expect(code).toBe(0);
  });
});

describe('/', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.stop());

  test('is a page of its own, linking GraphiQL and the console', async () => {
    const response = await fetch(`${t.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    const html = await response.text();
    expect(html).toContain('<a href="/graphql">');
    expect(html).toContain('<a href="/console">');
  });
});
