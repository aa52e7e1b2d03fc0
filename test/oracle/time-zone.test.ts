/**
 * Dates do not depend on the TZ the server is started with (issue: Thin and PGlite read and
 * write zone-less dates in local time). In a process started with TZ=America/New_York, the UTC
 * wall clock 2026-03-08 02:30 (inside New York's spring-forward gap) is fetched and bound
 * unchanged by the Oracle driver, with node-oracledb Thin's own date code, and read unchanged
 * from the embedded database on the serving thread and in its worker thread.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('a date inside a DST gap of the process’s TZ is read and bound as the UTC wall clock it is', async () => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/oracle/time-zone-child.ts', 'America/New_York'],
    {
      cwd: root,
      env: { ...process.env, TZ: 'America/New_York', ORACLE_CONNECT_STRING: '' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk;
  });
  const code = await new Promise((resolve) => child.on('close', resolve));
  expect(code).toBe(0);
  expect(JSON.parse(stdout)).toEqual({
    startedIn: 'America/New_York',
    oracle: { fetched: '2026-03-08T02:30:00.000Z', bound: '2026-03-08 02:30:00' },
    embeddedInThread: '2026-03-08T02:30:00.000Z',
    embeddedInWorker: '2026-03-08T02:30:00.000Z',
  });
});
