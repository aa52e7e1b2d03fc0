import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * A private redis-server on `port`, without persistence, resolved once it accepts connections:
 * the soaks kill, restart and pause it (bench/cache-fault-soak.ts, bench/redis-outage-soak.ts).
 */
export async function redisServer(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('exit', () => reject(new Error('redis-server exited')));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      if (line.includes('Ready to accept connections')) resolve();
    });
  });
  return child;
}
