import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { getOperationAST, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { WAIT_MS } from './support/wait.js';

/**
 * Every shell and GraphQL example of README.md and docs/*.md, run as a reader pastes it: the
 * shell ones by bash, the GraphQL ones over HTTP (SSE for a subscription or a live query),
 * against `npm start`'s process. A new example is run without a change here. One that cannot
 * run on this machine says so, and why, on the line before its fence:
 *
 *   <!-- example: not run here: needs an Oracle database -->
 *
 * and one that streams until stopped (curl -N) says `<!-- example: streams -->`: it passes
 * once it has streamed an event or a keep-alive, and no error. The server's default address in an example (127.0.0.1:4000,
 * and 4001 for the A2A stand-in) is replaced by the address of the server it runs against.
 */
interface Example {
  readonly where: string;
  readonly language: 'sh' | 'graphql';
  readonly text: string;
  /** Why it is not run here, when its marker says so. */
  readonly notRun?: string;
  readonly streams: boolean;
}

const MARKER = /^<!-- example: (.+) -->$/;

function examples(): Example[] {
  const files = [
    'README.md',
    ...readdirSync('docs')
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => `docs/${name}`),
  ];
  const found: Example[] = [];
  for (const file of files) {
    const lines = readFileSync(file, 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const fence = /^```(sh|graphql)\s*$/.exec(lines[i] ?? '');
      if (!fence) continue;
      const end = lines.indexOf('```', i + 1);
      if (end < 0) throw new Error(`${file}:${i + 1}: the fence is not closed`);
      let before = i - 1;
      while (before >= 0 && lines[before]?.trim() === '') before--;
      const marker = MARKER.exec(lines[before] ?? '')?.[1];
      if (marker !== undefined && marker !== 'streams' && !marker.startsWith('not run here: ')) {
        throw new Error(`${file}:${before + 1}: unknown example marker "${marker}"`);
      }
      found.push({
        where: `${file}:${i + 1}`,
        language: fence[1] as 'sh' | 'graphql',
        text: lines.slice(i + 1, end).join('\n'),
        ...(marker?.startsWith('not run here: ')
          ? { notRun: marker.slice('not run here: '.length) }
          : {}),
        streams: marker === 'streams',
      });
      i = end;
    }
  }
  return found;
}

const ALL = examples();
const RUN = ALL.filter((example) => example.notRun === undefined);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The environment of a reader's shell: this test's Node and npm first on the PATH. */
const shellEnv = (extra: Record<string, string>) => ({
  PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
  HOME: process.env.HOME ?? '/tmp',
  ...extra,
});

/**
 * `npm start`'s process on a free port; resolves with its address once it is ready. A
 * subscription example's first event waits for the simulator's next move and then for the
 * poll that sees it: a short period and poll interval keep those waits short.
 */
async function startServer(): Promise<{ child: ChildProcess; address: string }> {
  const child = spawn(process.execPath, ['scripts/run.mjs', 'src/main.ts'], {
    env: shellEnv({ PORT: '0', POLL_INTERVAL_MS: '250', SIMULATE_PERIOD_MS: '1000' }),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready: ${stdout}`)), 300_000);
    child.on('exit', (code) => reject(new Error(`npm start exited ${code}: ${stdout}`)));
    child.stdout?.on('data', (chunk) => {
      stdout += chunk;
      const ready = /"msg":"agent-graph ready at http:\/\/([^/]+)\/graphql/.exec(stdout);
      if (ready?.[1]) {
        clearTimeout(timer);
        resolve(ready[1]);
      }
    });
  });
  return { child, address };
}

/** The example's default addresses replaced by these. */
function rewritten(text: string, ports: { server: number; standin?: number }): string {
  return text
    .replace(/(?<=[:=])4000\b/g, String(ports.server))
    .replace(/(?<=[:=])4001\b/g, String(ports.standin ?? 4001));
}

interface ShellRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * bash -c with the example's text, in a process group of its own, stopped (with whatever it
 * started in the background, such as `npm start &`) once it has exited, or, for a streaming
 * example, once it has streamed an event.
 */
function runShell(
  script: string,
  env: Record<string, string>,
  streams: boolean,
): Promise<ShellRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { env: shellEnv(env), detached: true });
    let stdout = '';
    let stderr = '';
    const stop = () => {
      try {
        process.kill(-(child.pid as number), 'SIGTERM');
      } catch {
        // The group has ended already.
      }
    };
    const timer = setTimeout(
      () => {
        stop();
        reject(new Error(`did not finish: ${stdout}\n${stderr}`));
      },
      streams ? WAIT_MS * 3 : 300_000,
    );
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      // An event, or the stream's keep-alive (a line of just `:`): it was accepted.
      if (streams && /^(data: |:$)/m.test(stdout)) {
        clearTimeout(timer);
        stop();
        resolve({ code: 0, stdout, stderr });
      }
    });
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => {
      clearTimeout(timer);
      stop();
      resolve({ code, stdout, stderr });
    });
  });
}

/** GraphQL answers among an output's lines (curl prints them whole), none with errors. */
function expectNoGraphQLErrors(output: string): void {
  for (const line of output.split('\n')) {
    const json = line.replace(/^data: /, '').trim();
    if (!json.startsWith('{')) continue;
    const body = JSON.parse(json) as { errors?: unknown };
    expect(body.errors, json).toBeUndefined();
  }
}

/** The first result of an SSE operation (a subscription or a live query). */
async function firstEvent(
  url: string,
  query: string,
): Promise<{ data?: unknown; errors?: unknown }> {
  const abort = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query }),
    signal: abort.signal,
  });
  if (!response.body) throw new Error(`no body: ${response.status}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    const deadline = Date.now() + WAIT_MS * 3;
    while (Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      const data = /^event: next\ndata: (.+)$/m.exec(buffer)?.[1];
      if (data) return JSON.parse(data) as { data?: unknown; errors?: unknown };
    }
    throw new Error(`no event: ${buffer}`);
  } finally {
    abort.abort();
  }
}

describe('README and docs examples', () => {
  let server: { child: ChildProcess; address: string } | undefined;

  beforeAll(async () => {
    server = await startServer();
  }, 300_000);
  afterAll(() => {
    server?.child.kill('SIGTERM');
  });

  test('every example either runs here or says why not', () => {
    expect(RUN.length).toBeGreaterThan(5);
    for (const example of ALL.filter((e) => e.notRun !== undefined)) {
      expect(example.notRun?.length, example.where).toBeGreaterThan(5);
    }
  });

  test.each(RUN.map((example) => [example.where, example] as const))(
    '%s',
    async (_where, example) => {
      const address = server?.address as string;
      const port = Number(address.split(':')[1]);
      if (example.language === 'graphql') {
        const document = parse(example.text);
        const operation = getOperationAST(document);
        const url = `http://${address}/graphql`;
        const streamed =
          operation?.operation === 'subscription' ||
          operation?.directives?.some((d) => d.name.value === 'live');
        const body = streamed
          ? await firstEvent(url, example.text)
          : ((await (
              await fetch(url, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ query: example.text }),
              })
            ).json()) as { data?: unknown; errors?: unknown });
        expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
        expect(body.data).toBeTruthy();
        return;
      }
      // An example that starts its own server gets free ports; the others run against ours.
      const own = /\bnpm start\b/.test(example.text);
      const ports = own
        ? { server: await freePort(), standin: await freePort() }
        : { server: port };
      const result = await runShell(
        rewritten(example.text, ports),
        own ? { PORT: String(ports.server) } : {},
        example.streams,
      );
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trim()).not.toBe('');
      expectNoGraphQLErrors(result.stdout);
    },
    360_000,
  );
});
