/**
 * The smoke pass .ci/run makes on the Node the Docker image runs: the built server
 * (dist/main.js, as the image's CMD starts it) answers the dashboard, sends a subscription
 * event and serves the console's first page to a browser. Run with that Node, with the
 * directory to start it in (.ci/run: the image's production install plus dist/):
 * `NODE_RELEASE=24 scripts/node --import tsx scripts/smoke.ts <app directory>`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { launchChromium, offlineContext } from '../test/support/browser.js';

const DASHBOARD = `query Dashboard { teams(first: 20) { edges { node { name tools { name }
  runs(first: 10) { edges { node { state tasks { taskName agent { name } toolCalls { toolName } } } } } } } } }`;

function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(`smoke: ${what}`);
}

/** node dist/main.js in `app`, on a port of its own choosing; resolves with its URL once it logs that it is ready. */
function startBuilt(app: string, cacheDir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: app,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', EMBEDDED_CACHE_DIR: cacheDir },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`smoke: dist/main.js exited (${code})`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const entry = line.startsWith('{')
        ? (JSON.parse(line) as { url?: string; readyMs?: number })
        : {};
      if (entry.readyMs !== undefined && entry.url) {
        resolve({ url: entry.url.replace(/\/graphql$/, ''), child });
      }
    });
  });
}

const cacheDir = await mkdtemp(join(tmpdir(), 'agent-graph-smoke-'));
const { url, child } = await startBuilt(process.argv[2] ?? '.', cacheDir);
try {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: DASHBOARD }),
  });
  const dashboard = (await response.json()) as {
    data?: { teams: { edges: { node: { runs: { edges: unknown[] } } }[] } };
    errors?: unknown;
  };
  check(
    response.status === 200 && !dashboard.errors,
    `the dashboard: ${JSON.stringify(dashboard)}`,
  );
  const teams = dashboard.data?.teams.edges ?? [];
  check(teams.length === 20, `the dashboard shows ${teams.length} teams, not 20`);
  check(
    teams.some((team) => team.node.runs.edges.length > 0),
    'the dashboard shows no runs',
  );

  const ws = createClient({
    url: `${url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
  });
  try {
    const events = ws.iterate<{ teamsWaitingForHuman: { execId: string }[] }>({
      query: 'subscription { teamsWaitingForHuman { execId } }',
    });
    const first = await events.next();
    check(!first.done && !first.value.errors, `the subscription: ${JSON.stringify(first.value)}`);
    check(
      (first.value.data?.teamsWaitingForHuman.length ?? 0) > 0,
      'the subscription’s first event lists no waiting run',
    );
    await events.return?.(undefined);
  } finally {
    await ws.dispose();
  }

  const browser = await launchChromium();
  try {
    const { context, offLoopback } = await offlineContext(browser, { width: 1280, height: 900 });
    const page = await context.newPage();
    await page.goto(`${url}/console`);
    await page.locator('li[data-exec-id]').first().waitFor({ timeout: 20_000 });
    check(offLoopback.length === 0, `the console asked the internet for ${offLoopback}`);
  } finally {
    await browser.close();
  }
  console.log(`smoke on Node ${process.version}: dashboard, subscription event, console page`);
} finally {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  await rm(cacheDir, { recursive: true, force: true });
}
