import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { setRunState, startRun } from '../../src/db/embedded/simulator.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { embeddedPg, Wakeup } from './support.js';

const ROOT = new URL('../..', import.meta.url).pathname;
let t: TestServer;
let directory: string;
let child: ChildProcess | undefined;

beforeAll(async () => {
  t = await startTestServer({ POLL_INTERVAL_MS: '150' });
  // Inside the project, so that the example's imports resolve to its node_modules.
  directory = await mkdtemp(join(ROOT, 'test/live/.example-'));
});
afterAll(async () => {
  child?.kill('SIGKILL');
  await rm(directory, { recursive: true, force: true });
  await t.stop();
});

/** The TypeScript block of docs/subscriptions.md's "Live queries" section that runs a client. */
async function documentedClient(): Promise<string> {
  const doc = await readFile(join(ROOT, 'docs/subscriptions.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### Live queries'));
  const block = /```ts\n([\s\S]*?)```/.exec(section.slice(section.indexOf('**From code**')));
  if (!block?.[1]) throw new Error('no client example in docs/subscriptions.md');
  return block[1];
}

test('the documented urql client works as pasted: it follows the runs that wait', async () => {
  const source = await documentedClient();
  expect(source).toContain("url: 'ws://127.0.0.1:4000/graphql'");
  // The one change: the port of this test's server instead of 4000.
  const file = join(directory, 'client.ts');
  await writeFile(file, source.replaceAll('127.0.0.1:4000', new URL(t.url).host));
  child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const wakeup = new Wakeup();
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    lines.push(line);
    wakeup.wake();
  });
  const until = async (predicate: () => boolean, what: string) => {
    const deadline = Date.now() + 60_000;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${lines}`);
      await wakeup.next(deadline - Date.now());
    }
  };
  await until(() => lines.length > 0, 'the first answer');
  expect(lines[0]).toMatch(/^\d+ runs wait for a person:/);

  const pg = embeddedPg(t.server);
  const execId = randomUUID().replaceAll('-', '').toUpperCase();
  await startRun(pg, { owner: 'APP_USER', teamName: 'REPORT_SUMMARY_AGENT_TEAM', execId });
  await setRunState(pg, execId, 'WAITING_FOR_HUMAN');
  await until(() => lines.some((line) => line.includes(execId)), 'the run that now waits');
  const waiting = lines.find((line) => line.includes(execId)) as string;
  const count = Number(/^(\d+)/.exec(waiting)?.[1]);
  expect(waiting.split(':')[1]?.trim().split(' ')).toHaveLength(count);
});
