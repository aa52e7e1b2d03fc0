import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, describe, expect, test } from 'vitest';
import { createLogger, withRedaction } from '../../src/logger.js';
import { redisUrl } from '../support/redis.js';

const PASSWORD = 'redis-pw-never-logged-41';

function capture() {
  const lines: string[] = [];
  const destination = { write: (line: string) => lines.push(line) };
  return { lines, destination };
}

const redis = new Redis(redisUrl(), { lazyConnect: true, maxRetriesPerRequest: 0 });
afterAll(() => redis.disconnect());

/** A real ioredis reply error: AUTH with a password the tests' Redis (which has none) refuses. */
async function authError(): Promise<Error> {
  try {
    await redis.auth(PASSWORD);
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected AUTH to fail');
}

describe('secrets in logged errors', () => {
  test('an ioredis AUTH failure carries the password in command.args; the log line does not', async () => {
    const error = await authError();
    const plain = capture();
    pino({}, plain.destination).warn({ err: error }, 'Redis connection error');
    // What the logger would have written without the serializer.
    expect(plain.lines[0]).toContain(PASSWORD);

    const redacted = capture();
    withRedaction(pino({}, redacted.destination)).warn({ err: error }, 'Redis connection error');
    const line = JSON.parse(redacted.lines[0] ?? '{}');
    expect(redacted.lines[0]).not.toContain(PASSWORD);
    expect(line.err.command).toEqual({ name: 'auth', args: ['[redacted]'] });
    expect(line.err.message).toMatch(/^ERR AUTH/);
  });

  test('URL passwords, bearer tokens and Authorization headers in an error, its cause and its fields', () => {
    const { lines, destination } = capture();
    const cause = new Error('connect to redis://:cause-pw-1@10.0.0.5:6379 failed');
    const error = Object.assign(
      new Error('GET https://reader:url-pw-2@a2a.example.com/x sent Bearer tok.en-3', { cause }),
      {
        request: { headers: { Authorization: 'Basic dXNlcjpwdy00', accept: 'application/json' } },
        password: 'field-pw-5',
      },
    );
    createLogger({ level: 'info' }, destination).error(
      { err: error, url: 'https://reader:url-pw-6@a2a.example.com/y' },
      'failed',
    );
    const line = lines[0] ?? '';
    for (const secret of [
      'cause-pw-1',
      'url-pw-2',
      'tok.en-3',
      'dXNlcjpwdy00',
      'field-pw-5',
      'url-pw-6',
    ]) {
      expect(line).not.toContain(secret);
    }
    const logged = JSON.parse(line);
    expect(logged.err.message).toBe(
      'GET https://reader:[redacted]@a2a.example.com/x sent Bearer [redacted]: connect to redis://:[redacted]@10.0.0.5:6379 failed',
    );
    expect(logged.err.request.headers).toEqual({
      Authorization: '[redacted]',
      accept: 'application/json',
    });
    expect(logged.url).toBe('https://reader:[redacted]@a2a.example.com/y');
  });
});
