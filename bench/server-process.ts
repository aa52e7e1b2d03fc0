/** A real agent-graph process on a free loopback port, for the benches that load it over HTTP. */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export interface ServerOptions {
  /** The checkout to run, this one by default. */
  readonly cwd?: string;
  /** Receives the server's log output; without it, stdout is discarded. */
  readonly onStdout?: (text: string) => void;
  /** How long the server may take to answer /ready (default 30). */
  readonly readySeconds?: number;
}

export async function startServer(
  env: Record<string, string>,
  { cwd, onStdout, readySeconds = 30 }: ServerOptions = {},
): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  // As `npm start` runs it (scripts/run.mjs: src/ compiled once by esbuild, then plain
  // JavaScript), not under tsx, whose loader wraps every function made per request in a
  // naming call the product never pays (about 2 % of the serving thread on a small request).
  const child = spawn(process.execPath, ['scripts/run.mjs', 'src/main.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      SIMULATE: 'false',
      LOG_LEVEL: 'warn',
      // As the Dockerfile runs it (and the anchor kit runs PostGraphile): graphql-js skips its
      // development-mode type checks.
      NODE_ENV: 'production',
      ...env,
    },
    stdio: ['ignore', onStdout ? 'pipe' : 'ignore', 'inherit'],
    ...(cwd ? { cwd } : {}),
  });
  if (onStdout) child.stdout?.setEncoding('utf8').on('data', onStdout);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < readySeconds * 10; i++) {
    try {
      if ((await fetch(`${url}/ready`)).ok) return { url, child };
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  child.kill();
  throw new Error(`the server did not become ready in ${readySeconds} s`);
}
