import { spawn } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, test } from 'vitest';
import { WAIT_MS } from './support/wait.js';

/**
 * `npm start`'s first log line, read as a person at a terminal reads it (util-linux's
 * `script` gives the process a pseudo-terminal) and as a log collector reads it (a pipe);
 * the process is stopped once that line has come.
 */
function firstLine(env: Record<string, string>, terminal: boolean): Promise<string> {
  const command = `exec ${process.execPath} scripts/run.mjs src/main.ts`;
  const child = terminal
    ? spawn('script', ['-qefc', command, '/dev/null'], { env: { ...process.env, ...env } })
    : spawn(process.execPath, ['scripts/run.mjs', 'src/main.ts'], {
        env: { ...process.env, ...env },
      });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no line: ${out}`));
    }, WAIT_MS * 3);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const line = out.split(/\r?\n/).find((l) => l.includes('agent-graph starting on'));
      if (line) {
        clearTimeout(timer);
        child.kill('SIGTERM');
        resolve(line);
      }
    });
    child.on('error', reject);
  });
}

const env = { PORT: '0', SIMULATE: 'false', LOG_FORMAT: '', NODE_ENV: '' };

describe('logs readable on a terminal, JSON otherwise (LOG_FORMAT)', () => {
  test('on a terminal: time, level and message, no JSON', async () => {
    const line = await firstLine(env, true);
    expect(line).not.toMatch(/^\{/);
    // pino-pretty: `[HH:MM:ss.mmm] INFO: message`, in colour on a terminal.
    const plain = stripVTControlCharacters(line);
    expect(plain).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: agent-graph starting on http:\/\//);
    expect(plain).not.toContain('"msg"');
  });

  test('into a pipe: one JSON object a line, as before', async () => {
    const line = await firstLine(env, false);
    expect(JSON.parse(line)).toMatchObject({ level: 30, service: 'agent-graph' });
  });

  test('LOG_FORMAT=json keeps JSON on a terminal', async () => {
    const line = await firstLine({ ...env, LOG_FORMAT: 'json' }, true);
    expect(JSON.parse(line.trim())).toMatchObject({ level: 30 });
  });
});
