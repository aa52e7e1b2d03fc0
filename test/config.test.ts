import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { problemsOf } from './support/config.js';

describe('loadConfig', () => {
  test('an empty environment gives the documented defaults: embedded database on 127.0.0.1:4000', () => {
    expect(loadConfig({})).toMatchObject({
      host: '127.0.0.1',
      port: 4000,
      logLevel: 'info',
      database: {
        kind: 'embedded',
        sessionUser: 'APP_USER',
        viewScope: 'dba',
        latencyMs: 0,
        cacheDir: 'node_modules/.cache/agent-graph',
        worker: true,
      },
      live: {
        pollIntervalMs: 2000,
        redisUrl: undefined,
        redisCommandTimeoutMs: 1_000,
        simulate: true,
        simulatePeriodMs: 3_000,
      },
      auth: {
        jwt: null,
        userClaim: 'db_user',
        rolesClaim: 'roles',
        allowAnonymous: false,
        statsPublic: false,
      },
      a2a: { baseUrl: undefined, timeoutMs: 3000, cacheTtlMs: 60_000, retries: 2 },
      teamToolsCacheTtlMs: 60_000,
      limits: { maxQueryCost: 200_000, maxQueryDepth: 12, maxAliases: 15, maxBodyBytes: 1_048_576 },
      http: { introspection: true, corsOrigins: [] },
      tracing: { endpoint: undefined, serviceName: 'agent-graph' },
    });
  });

  test('reads every variable it knows', () => {
    const config = loadConfig({
      HOST: '0.0.0.0',
      ALLOW_ANONYMOUS: 'true',
      PORT: '8080',
      LOG_LEVEL: 'DEBUG',
      EMBEDDED_SESSION_USER: 'analyst',
      ORACLE_VIEW_SCOPE: 'user',
      EMBEDDED_LATENCY_MS: '5',
      EMBEDDED_CACHE_DIR: '/tmp/agent-graph-cache',
      EMBEDDED_WORKER: 'false',
      POLL_INTERVAL_MS: '500',
      TEAM_TOOLS_CACHE_TTL_MS: '0',
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_COMMAND_TIMEOUT_MS: '200',
      SIMULATE: 'off',
      SIMULATE_PERIOD_MS: '500',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_SERVICE_NAME: 'agent-graph-eu',
    });
    expect(config).toMatchObject({
      host: '0.0.0.0',
      port: 8080,
      logLevel: 'debug',
      database: {
        kind: 'embedded',
        sessionUser: 'ANALYST',
        viewScope: 'user',
        latencyMs: 5,
        cacheDir: '/tmp/agent-graph-cache',
        worker: false,
      },
      live: {
        pollIntervalMs: 500,
        redisUrl: 'redis://127.0.0.1:6379',
        redisCommandTimeoutMs: 200,
        simulate: false,
        simulatePeriodMs: 500,
      },
      teamToolsCacheTtlMs: 0,
      tracing: { endpoint: 'http://127.0.0.1:4318', serviceName: 'agent-graph-eu' },
    });
  });

  test('empty and blank values count as unset', () => {
    expect(loadConfig({ PORT: '', HOST: '  ', ORACLE_CONNECT_STRING: '' })).toMatchObject({
      host: '127.0.0.1',
      port: 4000,
      database: { kind: 'embedded' },
    });
  });

  test('PORT=abc is refused, naming the variable and the value', () => {
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(ConfigError);
    const problems = problemsOf({ PORT: 'abc' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^PORT must be a whole number from 0 to 65535 \(got "abc"\)$/);
  });

  test.each([
    ['PORT', '65536'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['EMBEDDED_LATENCY_MS', '-3'],
    ['POLL_INTERVAL_MS', '10'],
    ['LOG_LEVEL', 'loud'],
    ['ORACLE_VIEW_SCOPE', 'everything'],
    ['SIMULATE', 'maybe'],
    ['EMBEDDED_WORKER', 'both'],
    ['REDIS_URL', 'localhost:6379'],
    ['REDIS_URL', 'http://127.0.0.1:6379'],
    ['REDIS_COMMAND_TIMEOUT_MS', '0'],
    ['SIMULATE_PERIOD_MS', '10'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', '127.0.0.1:4318'],
  ])('%s=%s is refused', (name, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(name);
    expect(problems[0]).toContain(value);
  });

  test('several bad values are all reported in one error', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'abc', LOG_LEVEL: 'loud', SIMULATE: 'maybe', POLL_INTERVAL_MS: 'soon' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { problems, message } = error as ConfigError;
    expect(problems).toHaveLength(4);
    for (const name of ['PORT', 'LOG_LEVEL', 'SIMULATE', 'POLL_INTERVAL_MS']) {
      expect(problems.filter((p) => p.startsWith(name))).toHaveLength(1);
      expect(message).toContain(name);
    }
  });

  test('ORACLE_CONNECT_STRING needs ORACLE_USER and ORACLE_PASSWORD', () => {
    const problems = problemsOf({ ORACLE_CONNECT_STRING: 'dbhost:1521/FREEPDB1' });
    expect(problems).toHaveLength(2);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ORACLE_USER is required when ORACLE_CONNECT_STRING is set/),
        expect.stringMatching(/^ORACLE_PASSWORD is required when ORACLE_CONNECT_STRING is set/),
      ]),
    );
  });

  test('Oracle settings: view scope defaults to user, the wallet is optional, pool bounds are checked', () => {
    const config = loadConfig({
      ORACLE_CONNECT_STRING: 'mydb_high',
      ORACLE_USER: 'app_user',
      ORACLE_PASSWORD: 'secret',
      ORACLE_CONFIG_DIR: '/opt/wallet',
      ORACLE_WALLET_LOCATION: '/opt/wallet',
      ORACLE_WALLET_PASSWORD: 'wallet-secret',
    });
    expect(config.database).toMatchObject({
      kind: 'oracle',
      connectString: 'mydb_high',
      user: 'app_user',
      password: 'secret',
      configDir: '/opt/wallet',
      walletLocation: '/opt/wallet',
      walletPassword: 'wallet-secret',
      viewScope: 'user',
    });
    expect(config.live.simulate).toBe(false);

    const problems = problemsOf({
      ORACLE_CONNECT_STRING: 'mydb_high',
      ORACLE_USER: 'app_user',
      ORACLE_PASSWORD: 'secret',
      DB_POOL_MIN: '9',
      DB_POOL_MAX: '4',
    });
    expect(problems).toEqual(['DB_POOL_MIN (9) exceeds DB_POOL_MAX (4)']);
  });

  test('the start-up dictionary discovery has its own timeout, DB_DISCOVERY_TIMEOUT_MS (default 60 s)', () => {
    const oracle = { ORACLE_CONNECT_STRING: 'mydb_high', ORACLE_USER: 'u', ORACLE_PASSWORD: 'p' };
    expect(loadConfig(oracle).database).toMatchObject({
      callTimeoutMs: 10_000,
      discoveryTimeoutMs: 60_000,
    });
    expect(loadConfig({ ...oracle, DB_DISCOVERY_TIMEOUT_MS: '120000' }).database).toMatchObject({
      discoveryTimeoutMs: 120_000,
    });
    expect(problemsOf({ ...oracle, DB_DISCOVERY_TIMEOUT_MS: '0' })).toEqual([
      'DB_DISCOVERY_TIMEOUT_MS must be a whole number from 1 to 600000 (got "0")',
    ]);
  });

  test('EXECUTE_AGENT_TIMEOUT_MS: 20 s by default, never past REQUEST_TIMEOUT_MS', () => {
    expect(loadConfig({}).executeAgent.timeoutMs).toBe(20_000);
    expect(
      loadConfig({ EXECUTE_AGENT_TIMEOUT_MS: '120000', REQUEST_TIMEOUT_MS: '180000' }).executeAgent,
    ).toEqual({
      timeoutMs: 120_000,
    });
    // Unset, it follows a lower operation limit instead of refusing to start.
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '5000' }).executeAgent.timeoutMs).toBe(5_000);
    expect(problemsOf({ EXECUTE_AGENT_TIMEOUT_MS: '60000' })).toEqual([
      'EXECUTE_AGENT_TIMEOUT_MS (60000) exceeds REQUEST_TIMEOUT_MS (30000), which would end the operation first: raise REQUEST_TIMEOUT_MS too',
    ]);
  });

  test('the result is frozen all the way down', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.database)).toBe(true);
    expect(Object.isFrozen(config.live)).toBe(true);
    expect(() => {
      (config as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(() => {
      (config.live as { simulate: boolean }).simulate = false;
    }).toThrow(TypeError);
  });
});

describe('URLs in the configuration', () => {
  test('a user name or password inside any URL is refused at start, all reported at once, none echoed', () => {
    const problems = problemsOf({
      A2A_BASE_URL: 'https://reader:s3cret-a2a@a2a.example.com/adb/a2a/v1/databases/x',
      A2A_TOKEN_URL: 'https://reader:s3cret-token@a2a.example.com/token',
      AUTH_JWKS_URL: 'https://idp:s3cret-jwks@idp.example.com/jwks.json',
      REDIS_URL: 'redis://:s3cret-redis@127.0.0.1:6379',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:s3cret-otel@127.0.0.1:4318',
    });
    expect(problems).toEqual([
      'AUTH_JWKS_URL must not carry a user name or password',
      'A2A_BASE_URL must not carry a user name or password; set A2A_TOKEN or A2A_USERNAME/A2A_PASSWORD instead',
      'A2A_TOKEN_URL must not carry a user name or password; set A2A_TOKEN or A2A_USERNAME/A2A_PASSWORD instead',
      'REDIS_URL must not carry a user name or password; set REDIS_USERNAME/REDIS_PASSWORD instead',
      'OTEL_EXPORTER_OTLP_ENDPOINT must not carry a user name or password',
    ]);
    expect(problems.join('\n')).not.toContain('s3cret');
  });

  test('Redis credentials come from REDIS_USERNAME and REDIS_PASSWORD', () => {
    const config = loadConfig({
      REDIS_URL: 'rediss://redis.example.com:6380',
      REDIS_USERNAME: 'agentgraph',
      REDIS_PASSWORD: 'pw',
    });
    expect(config.live).toMatchObject({
      redisUrl: 'rediss://redis.example.com:6380',
      redisUsername: 'agentgraph',
      redisPassword: 'pw',
    });
  });

  test.each([
    ['ftp://idp.example.com/jwks.json', false],
    ['file:///etc/jwks.json', false],
    ['http://idp.example.com/jwks.json', false],
    ['http://127.0.0.1:8080/jwks.json', true],
    ['http://localhost:8080/jwks.json', true],
    ['http://[::1]:8080/jwks.json', true],
    ['https://idp.example.com/jwks.json', true],
  ])('AUTH_JWKS_URL=%s accepted: %s (https, http only on loopback)', (url, accepted) => {
    const problems = problemsOf({ AUTH_JWKS_URL: url });
    if (accepted) expect(problems).toEqual([]);
    else expect(problems).toEqual([expect.stringMatching(/^AUTH_JWKS_URL must be an https/)]);
  });
});

describe('start-up with a bad configuration', () => {
  test('stops with one message listing every problem, before opening the database', async () => {
    const run = promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { PATH: process.env.PATH, PORT: 'abc', LOG_LEVEL: 'loud' },
      timeout: 20_000,
    });
    await expect(run).rejects.toMatchObject({ code: 1 });
    const { stderr } = (await run.catch((error: unknown) => error)) as { stderr: string };
    expect(stderr).toContain('agent-graph: Invalid configuration:');
    expect(stderr).toContain('PORT must be a whole number from 0 to 65535 (got "abc")');
    expect(stderr).toContain('LOG_LEVEL must be one of');
  });
});
