import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { problemsOf } from '../support/config.js';

describe('limits', () => {
  test('defaults', () => {
    expect(loadConfig({}).limits).toEqual({
      maxQueryCost: 200_000,
      maxQueryDepth: 12,
      maxAliases: 15,
      maxDirectives: 50,
      maxTokens: 1_000,
      maxBodyBytes: 1_048_576,
      maxResponseBytes: 16_777_216,
      requestTimeoutMs: 30_000,
      maxSubscriptionsPerSocket: 100,
      maxSubscriptionsPerViewer: 1_000,
      maxActionsPerOperation: 5,
      maxLiveQueriesPerViewer: 100,
      maxLiveQueries: 5_000,
    });
  });

  test('every limit is read from its variable', () => {
    const config = loadConfig({
      MAX_QUERY_COST: '5000',
      MAX_QUERY_DEPTH: '8',
      MAX_ALIASES: '0',
      MAX_DIRECTIVES: '4',
      MAX_TOKENS: '300',
      MAX_BODY_BYTES: '65536',
      MAX_RESPONSE_BYTES: '2048',
      REQUEST_TIMEOUT_MS: '2500',
      MAX_SUBSCRIPTIONS_PER_SOCKET: '3',
      MAX_SUBSCRIPTIONS_PER_VIEWER: '7',
      MAX_ACTIONS_PER_OPERATION: '2',
      MAX_LIVE_QUERIES_PER_VIEWER: '9',
      MAX_LIVE_QUERIES: '40',
    });
    expect(config.limits).toEqual({
      maxQueryCost: 5_000,
      maxQueryDepth: 8,
      maxAliases: 0,
      maxDirectives: 4,
      maxTokens: 300,
      maxBodyBytes: 65_536,
      maxResponseBytes: 2_048,
      requestTimeoutMs: 2_500,
      maxSubscriptionsPerSocket: 3,
      maxSubscriptionsPerViewer: 7,
      maxActionsPerOperation: 2,
      maxLiveQueriesPerViewer: 9,
      maxLiveQueries: 40,
    });
    expect(Object.isFrozen(config.limits)).toBe(true);
  });

  test('bad values are all reported together', () => {
    const problems = problemsOf({
      MAX_QUERY_COST: '0',
      MAX_QUERY_DEPTH: 'deep',
      MAX_ALIASES: '-1',
      MAX_DIRECTIVES: '1.5',
      MAX_TOKENS: '',
      MAX_BODY_BYTES: '10',
      REQUEST_TIMEOUT_MS: '1e3',
      MAX_RESPONSE_BYTES: '1000',
      MAX_SUBSCRIPTIONS_PER_SOCKET: '0',
      MAX_SUBSCRIPTIONS_PER_VIEWER: 'many',
    });
    expect(problems).toEqual([
      'MAX_QUERY_COST must be a whole number from 1 to 1000000000 (got "0")',
      'MAX_QUERY_DEPTH must be a whole number from 1 to 1000 (got "deep")',
      'MAX_ALIASES must be a whole number from 0 to 100000 (got "-1")',
      'MAX_DIRECTIVES must be a whole number from 0 to 100000 (got "1.5")',
      'MAX_BODY_BYTES must be a whole number from 1024 to 1073741824 (got "10")',
      'MAX_RESPONSE_BYTES must be a whole number from 1024 to 1073741824 (got "1000")',
      'REQUEST_TIMEOUT_MS must be a whole number from 1 to 3600000 (got "1e3")',
      'MAX_SUBSCRIPTIONS_PER_SOCKET must be a whole number from 1 to 1000000 (got "0")',
      'MAX_SUBSCRIPTIONS_PER_VIEWER must be a whole number from 1 to 1000000 (got "many")',
    ]);
  });
});

describe('rate limit', () => {
  test('off by default', () => {
    expect(loadConfig({}).rateLimit).toEqual({
      windowMs: 60_000,
      requests: 0,
      subscriptions: 0,
      actions: 0,
    });
  });

  test('read from its variables, bad values reported together', () => {
    expect(
      loadConfig({
        RATE_LIMIT_WINDOW_MS: '10000',
        RATE_LIMIT_REQUESTS: '600',
        RATE_LIMIT_SUBSCRIPTIONS: '30',
      }).rateLimit,
    ).toEqual({ windowMs: 10_000, requests: 600, subscriptions: 30, actions: 600 });
    expect(
      loadConfig({ RATE_LIMIT_REQUESTS: '600', RATE_LIMIT_ACTIONS: '20' }).rateLimit.actions,
    ).toBe(20);
    expect(
      problemsOf({
        RATE_LIMIT_WINDOW_MS: '10',
        RATE_LIMIT_REQUESTS: '-5',
        RATE_LIMIT_SUBSCRIPTIONS: 'lots',
      }),
    ).toEqual([
      'RATE_LIMIT_WINDOW_MS must be a whole number from 1000 to 86400000 (got "10")',
      'RATE_LIMIT_REQUESTS must be a whole number from 0 to 1000000000 (got "-5")',
      'RATE_LIMIT_SUBSCRIPTIONS must be a whole number from 0 to 1000000000 (got "lots")',
    ]);
  });
});

describe('http', () => {
  test('defaults: introspection on, no cross-origin access', () => {
    expect(loadConfig({}).http).toEqual({ introspection: true, corsOrigins: [] });
  });

  test('INTROSPECTION=false turns introspection off', () => {
    expect(loadConfig({ INTROSPECTION: 'false' }).http.introspection).toBe(false);
    expect(problemsOf({ INTROSPECTION: 'sometimes' })).toEqual([
      'INTROSPECTION must be true or false (got "sometimes")',
    ]);
  });

  test('CORS_ORIGINS is a comma-separated list of origins, normalised as browsers send them', () => {
    const config = loadConfig({
      CORS_ORIGINS: ' https://App.Example.com , http://localhost:5173/,,https://b.example:443',
    });
    expect(config.http.corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
      'https://b.example',
    ]);
  });

  test('CORS_ORIGINS entries that are not bare origins are rejected, each named', () => {
    expect(
      problemsOf({ CORS_ORIGINS: 'https://ok.example,*,app.example.com,https://x.example/path' }),
    ).toEqual([
      'CORS_ORIGINS entries must be origins such as https://app.example.com (got "*")',
      'CORS_ORIGINS entries must be origins such as https://app.example.com (got "app.example.com")',
      'CORS_ORIGINS entries must be origins such as https://app.example.com (got "https://x.example/path")',
    ]);
  });

  test('limit and http problems are listed with the rest of the configuration', () => {
    const problems = problemsOf({ PORT: 'x', MAX_TOKENS: '0', CORS_ORIGINS: 'nope' });
    expect(problems).toHaveLength(3);
  });
});
