import { type ChildProcess, spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the Redis tests find Redis, or why there is none. */
    redis: { url: string } | { problem: string };
  }
}

const STANDARD_PORT = 6379;

export const NO_REDIS = `npm test needs Redis: nothing answers at 127.0.0.1:${STANDARD_PORT} and redis-server is not installed. Start Redis there (redis-server, or docker run -p 6379:6379 redis), or install redis-server (apt-get install redis-server) and the tests start a private one.`;

/** Whether a Redis server answers PING at 127.0.0.1:port. */
export function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(2_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

/**
 * A throwaway redis-server on a free loopback port, with nothing saved to disk; resolves once
 * it accepts connections, or to undefined when redis-server is not installed.
 */
async function startPrivateRedis(
  port?: number,
): Promise<{ url: string; child: ChildProcess } | undefined> {
  port ??= await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const ready = await new Promise<boolean>((resolve) => {
    child.once('error', () => resolve(false));
    child.once('exit', () => resolve(false));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      if (line.includes('Ready to accept connections')) resolve(true);
    });
  });
  return ready ? { url: `redis://127.0.0.1:${port}`, child } : undefined;
}

/**
 * For vitest's globalSetup: the Redis at 127.0.0.1:6379 when one answers, else a private one
 * when redis-server is installed; returns what to stop afterwards.
 */
export async function provideRedis(
  provide: (redis: { url: string } | { problem: string }) => void,
  standardPort = STANDARD_PORT,
): Promise<() => void> {
  if (await redisAnswers(standardPort)) {
    provide({ url: `redis://127.0.0.1:${standardPort}` });
    return () => {};
  }
  const started = await startPrivateRedis();
  provide(started ? { url: started.url } : { problem: NO_REDIS });
  return () => started?.child.kill();
}

/** The Redis URL for a test file; without one, fails the file with what to do. */
export function redisUrl(): string {
  const redis = inject('redis');
  if ('problem' in redis) throw new Error(redis.problem);
  return redis.url;
}

/**
 * A redis-server of this test's own, to kill, pause (SIGSTOP) and bring back: never the
 * shared one at 127.0.0.1:6379, which other tests use at the same time.
 */
export class PrivateRedis {
  private constructor(
    readonly url: string,
    readonly port: number,
    private child: ChildProcess,
  ) {}

  static async start(): Promise<PrivateRedis> {
    const started = await startPrivateRedis();
    if (!started) throw new Error(NO_REDIS);
    return new PrivateRedis(started.url, Number(new URL(started.url).port), started.child);
  }

  /** SIGKILL, resolving once the process has exited (its port is free again). */
  async kill(): Promise<void> {
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** A new, empty redis-server on the same port. */
  async restart(): Promise<void> {
    await this.kill();
    const started = await startPrivateRedis(this.port);
    if (!started) throw new Error(`redis-server did not start again on port ${this.port}`);
    this.child = started.child;
  }

  pause(): void {
    this.child.kill('SIGSTOP');
  }

  resume(): void {
    this.child.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    this.resume();
    await this.kill();
  }
}
