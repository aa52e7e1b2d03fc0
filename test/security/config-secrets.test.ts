import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startupError } from '../../src/db/oracle/errors.js';
import { connectTarget } from '../../src/db/oracle/options.js';
import { problemsOf } from '../support/config.js';

const SECRET = 'Sup3rSecret';

describe('configuration values echoed to the operator never carry a credential (issue 25, item 7)', () => {
  test.each([
    ['REDIS_URL without a scheme', { REDIS_URL: `default:${SECRET}@127.0.0.1:6379` }],
    ['REDIS_URL of another scheme', { REDIS_URL: `http://u:${SECRET}@127.0.0.1:6379` }],
    ['an unparsable URL', { A2A_BASE_URL: `user:${SECRET}@` }],
    ['A2A_BASE_URL over plain http', { A2A_BASE_URL: `http://u:${SECRET}@db.example.com/` }],
  ])('%s', (_, env) => {
    const problems = problemsOf(env);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.join('\n')).not.toContain(SECRET);
    expect(() => loadConfig(env)).toThrow(/…@|user name or password/);
  });

  test('an Easy Connect string of the form user/password@host/service, in oracle:check and driver errors', () => {
    const connectString = `app_user/${SECRET}@db.example.com:1521/FREEPDB1`;
    expect(connectTarget(connectString)).toBe('…@db.example.com:1521/FREEPDB1');
    const driverError = Object.assign(
      new Error(
        `ORA-12154: Cannot connect to database. Cannot find alias ${connectString} in tnsnames.ora`,
      ),
      { code: 'ORA-12154' },
    );
    const error = startupError(driverError, {
      user: 'APP_USER',
      target: connectTarget(connectString),
    });
    expect(error.message).not.toContain(SECRET);
    expect(error.message).toContain('db.example.com:1521/FREEPDB1');
  });
});
