/**
 * A bench's clients in a process of their own (bench/subscriber-clients.ts,
 * bench/live-query-clients.ts), so that the server's event loop, CPU and memory hold none of
 * them: one JSON command line out, one answer line back. Both processes stamp times with the
 * same wall clock (performance.timeOrigin + performance.now()).
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

export class ClientProcess {
  private readonly answers: AsyncIterator<string>;

  private constructor(private readonly child: ChildProcessByStdio<Writable, Readable, null>) {
    this.answers = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  }

  /** Runs `script` (a path under bench/) with `args`. */
  static start(script: string, args: readonly string[]): ClientProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: new URL('..', import.meta.url),
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    return new ClientProcess(child);
  }

  send(command: unknown): void {
    this.child.stdin.write(`${JSON.stringify(command)}\n`);
  }

  async answer<T>(timeoutMs: number): Promise<T> {
    return JSON.parse(await this.line(timeoutMs)) as T;
  }

  /** The next answer, unparsed. */
  async line(timeoutMs: number): Promise<string> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer from the client process in ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      const next = await Promise.race([this.answers.next(), timeout]);
      if (next.done) throw new Error('the client process ended');
      return next.value;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.send({ close: true });
    await exited;
  }
}
