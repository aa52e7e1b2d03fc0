import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { closedPort, silentListener } from './support.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

const children: ChildProcess[] = [];
// A server that did start would run until stopped; its test fails on the exit code or at the
// test's time limit, and the process is killed here.
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** `npm start` without npm (scripts/run.mjs on src/main.ts), with only the given database settings. */
function start(env: Record<string, string>): Promise<Exit> {
  const started = Date.now();
  const child = spawn(process.execPath, ['scripts/run.mjs', 'src/main.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  return new Promise((resolve) => {
    child.on('close', (code) => {
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

describe('start-up against an Oracle that cannot be used', () => {
  const listeners: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(listeners.map((l) => l.close()));
  });

  test('a closed port: exit 1 with one readable line, before the connect timeout', async () => {
    const port = await closedPort();
    // A connect timeout far past the test's time limit: a refused connection must not wait for
    // it, so the process exits long before (however slowly a loaded machine starts it).
    const connectTimeoutMs = 600_000;
    const result = await start({
      ORACLE_CONNECT_STRING: `127.0.0.1:${port}/none`,
      ORACLE_USER: 'x',
      ORACLE_PASSWORD: 'y',
      DB_CONNECT_TIMEOUT_MS: String(connectTimeoutMs),
    });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(
      new RegExp(
        `^agent-graph: cannot connect to Oracle at 127\\.0\\.0\\.1:${port}/none: NJS-503: .*ECONNREFUSED`,
      ),
    );
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(result.stderr).not.toContain('password');
    // The first line comes before the database is opened (src/listen.ts); nothing says ready.
    expect(
      result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).msg),
    ).toEqual([expect.stringMatching(/^agent-graph starting on /)]);
    expect(result.ms).toBeLessThan(connectTimeoutMs);
  });

  test('a database that never answers: exit 1 at DB_CONNECT_TIMEOUT_MS, not a hang', async () => {
    const silent = await silentListener();
    listeners.push(silent);
    const result = await start({
      ORACLE_CONNECT_STRING: `127.0.0.1:${silent.port}/none`,
      ORACLE_USER: 'x',
      ORACLE_PASSWORD: 'y',
      DB_CONNECT_TIMEOUT_MS: '1500',
    });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      `agent-graph: no answer from Oracle at 127.0.0.1:${silent.port}/none within 1500 ms (DB_CONNECT_TIMEOUT_MS)`,
    );
    expect(result.ms).toBeGreaterThanOrEqual(1500);
  });

  test('missing credentials are a configuration error, listed together', async () => {
    const result = await start({ ORACLE_CONNECT_STRING: '127.0.0.1:1/none' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('ORACLE_USER is required when ORACLE_CONNECT_STRING is set');
    expect(result.stderr).toContain(
      'ORACLE_PASSWORD is required when ORACLE_CONNECT_STRING is set',
    );
  });
});
