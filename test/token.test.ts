import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestServer, type TestServer } from './support/server.js';

// `npm run token` as a developer runs it (a child process with the server's environment, as
// package.json runs it), and its token presented to a server configured the same way.
const AUTH = {
  AUTH_JWT_SECRET: 'a-development-secret-of-at-least-32-characters',
  AUTH_ISSUER: 'https://issuer.example',
  AUTH_AUDIENCE: 'agent-graph',
};

const run = promisify(execFile);

async function mint(
  args: string[],
  env: Record<string, string> = AUTH,
): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ['scripts/run.mjs', 'src/mint-token.ts', ...args],
      { env: { PATH: process.env.PATH ?? '', ...env } },
    );
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer(AUTH);
});
afterAll(() => t.stop());

const OWNERS = '{ agents(first: 100) { totalCount nodes { owner } } }';
type Owners = { agents: { totalCount: number; nodes: { owner: string }[] } };

describe('npm run token', () => {
  test("a user's token is accepted and sees that owner's agents only", async () => {
    const minted = await mint(['--user', 'app_user']);
    expect(minted.code).toBe(0);
    const token = minted.stdout.trim();
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const result = await t.post<Owners>(OWNERS, {}, { authorization: `Bearer ${token}` });
    expect(result.status).toBe(200);
    expect(result.errors).toBeUndefined();
    const owners = new Set(result.data?.agents.nodes.map((agent) => agent.owner));
    expect([...owners]).toEqual(['APP_USER']);
  });

  test('an admin token sees every owner', async () => {
    const token = (await mint(['--roles', 'admin'])).stdout.trim();
    const result = await t.post<Owners>(OWNERS, {}, { authorization: `Bearer ${token}` });
    expect(result.data?.agents.totalCount).toBe(7);
    expect(new Set(result.data?.agents.nodes.map((agent) => agent.owner)).size).toBeGreaterThan(1);
  });

  test('a token minted with another secret is refused', async () => {
    const other = await mint(['--user', 'APP_USER'], {
      ...AUTH,
      AUTH_JWT_SECRET: 'another-secret-of-at-least-32-characters!!',
    });
    const result = await t.post(OWNERS, {}, { authorization: `Bearer ${other.stdout.trim()}` });
    expect(result.status).toBe(401);
    expect(result.errors?.[0]?.message).toBe('invalid token: bad signature');
  });

  test('without AUTH_JWT_SECRET it says why there is nothing to mint', async () => {
    const minted = await mint(['--user', 'APP_USER'], {});
    expect(minted.code).toBe(1);
    expect(minted.stdout).toBe('');
    expect(minted.stderr).toMatch(/^agent-graph token: AUTH_JWT_SECRET is not set/);
  });
});

describe('npm run token refuses what the server would (issue 25, also seen)', () => {
  test('--help prints the usage and exits 0', async () => {
    const help = await mint(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: npm run -s token -- --user APP_USER');
    expect(help.stdout).toContain('--expires');
  });

  test.each([['100y'], ['31d'], ['0h'], ['soon']])(
    '--expires %s is refused, naming what is accepted',
    async (span) => {
      const minted = await mint(['--user', 'app_user', '--expires', span]);
      expect(minted.code).toBe(1);
      expect(minted.stdout).toBe('');
      expect(minted.stderr).toContain(
        `--expires takes a number and s, m, h or d, from 1s to 30d (got "${span}")`,
      );
    },
  );

  test('a db_user the server would reject is refused, not minted', async () => {
    for (const user of ['app user', '"Mixed"', 'ſcott', '1APP']) {
      const minted = await mint(['--user', user]);
      expect(minted.code, user).toBe(1);
      expect(minted.stderr, user).toContain('--user must be an Oracle user name');
    }
  });

  test('30d is the longest accepted, and its token works', async () => {
    const token = (await mint(['--user', 'app_user', '--expires', '30d'])).stdout.trim();
    const result = await t.post<Owners>(OWNERS, {}, { authorization: `Bearer ${token}` });
    expect(result.errors).toBeUndefined();
  });
});
