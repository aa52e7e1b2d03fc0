import { describe, expect, test } from 'vitest';
import { deriveTokenUrl } from '../../src/a2a/paths.js';
import { ConfigError, loadConfig } from '../../src/config.js';

const ORACLE_BASE =
  'https://dataaccess.adb.eu-frankfurt-1.oraclecloudapps.com/adb/a2a/v1/databases/ocid1.autonomousdatabase.oc1..aaa';

function problems(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('A2A configuration', () => {
  test('defaults: no base URL (the stand-in in embedded mode), 3 s timeout, 2 retries', () => {
    expect(loadConfig({}).a2a).toEqual({
      baseUrl: undefined,
      token: undefined,
      username: undefined,
      password: undefined,
      tokenUrl: undefined,
      timeoutMs: 3000,
      cacheTtlMs: 60_000,
      retries: 2,
      maxBodyBytes: 1_048_576,
      standinPort: 0,
    });
  });

  test('reads every variable', () => {
    const a2a = loadConfig({
      A2A_BASE_URL: ORACLE_BASE,
      A2A_TOKEN: 'static-token',
      A2A_USERNAME: 'APP_USER',
      A2A_PASSWORD: 'secret',
      A2A_TOKEN_URL: 'https://auth.example.com/token',
      A2A_TIMEOUT_MS: '500',
      A2A_CACHE_TTL_MS: '0',
      A2A_RETRIES: '0',
      A2A_MAX_BODY_BYTES: '65536',
      A2A_STANDIN_PORT: '4100',
    }).a2a;
    expect(a2a).toEqual({
      baseUrl: ORACLE_BASE,
      token: 'static-token',
      username: 'APP_USER',
      password: 'secret',
      tokenUrl: 'https://auth.example.com/token',
      timeoutMs: 500,
      cacheTtlMs: 0,
      retries: 0,
      maxBodyBytes: 65_536,
      standinPort: 4100,
    });
    expect(Object.isFrozen(a2a)).toBe(true);
  });

  test('lists every A2A problem at once, never echoing the password', () => {
    const found = problems({
      A2A_BASE_URL: 'ftp://example.com/a2a',
      A2A_USERNAME: 'APP_USER',
      A2A_TIMEOUT_MS: '0',
      A2A_RETRIES: '99',
      A2A_CACHE_TTL_MS: 'soon',
    });
    expect(found).toEqual([
      'A2A_BASE_URL must be a http: or https: URL (got "ftp://example.com/a2a")',
      'A2A_USERNAME and A2A_PASSWORD must be set together',
      'A2A_TIMEOUT_MS must be a whole number from 1 to 600000 (got "0")',
      'A2A_CACHE_TTL_MS must be a whole number from 0 to 86400000 (got "soon")',
      'A2A_RETRIES must be a whole number from 0 to 10 (got "99")',
    ]);
    expect(problems({ A2A_PASSWORD: 'hunter2' }).join('\n')).not.toContain('hunter2');
  });

  test('credentials need a token URL when the base URL is not Oracle-shaped', () => {
    const env = {
      A2A_BASE_URL: 'https://a2a.example.com/agents-root',
      A2A_USERNAME: 'APP_USER',
      A2A_PASSWORD: 'secret',
    };
    expect(problems(env)).toEqual([
      'A2A_TOKEN_URL is required when A2A_BASE_URL does not end in /adb/a2a/v1/databases/{ocid}',
    ]);
    expect(problems({ ...env, A2A_TOKEN_URL: 'https://a2a.example.com/token' })).toEqual([]);
    expect(loadConfig({ ...env, A2A_BASE_URL: ORACLE_BASE }).a2a.tokenUrl).toBe(
      deriveTokenUrl(ORACLE_BASE),
    );
    expect(problems({ ...env, A2A_USERNAME: '', A2A_PASSWORD: '', A2A_TOKEN: 't' })).toEqual([]);
  });
});

describe('deriveTokenUrl', () => {
  test('maps the A2A prefix to the auth endpoint of the same database (reference)', () => {
    expect(deriveTokenUrl(ORACLE_BASE)).toBe(
      'https://dataaccess.adb.eu-frankfurt-1.oraclecloudapps.com/adb/auth/v1/databases/ocid1.autonomousdatabase.oc1..aaa/token',
    );
    expect(deriveTokenUrl(`${ORACLE_BASE}/`)).toBe(deriveTokenUrl(ORACLE_BASE));
    expect(deriveTokenUrl('http://127.0.0.1:9/proxy/adb/a2a/v1/databases/x')).toBe(
      'http://127.0.0.1:9/proxy/adb/auth/v1/databases/x/token',
    );
    expect(deriveTokenUrl('https://example.com/a2a')).toBeNull();
  });
});
