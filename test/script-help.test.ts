import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';

const run = promisify(execFile);

/**
 * Every script a user is told to run: each package.json script that runs a TypeScript file,
 * and each `npx tsx <file>.ts` the README and docs/ show. A new one is covered without a
 * change here.
 */
function scriptFiles(): string[] {
  const files = new Set<string>();
  const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as {
    scripts: Record<string, string>;
  };
  // Those that run a file of ours through tsx or scripts/run.mjs (vitest's are vitest's).
  for (const command of Object.values(scripts).filter((c) => /\btsx\b|run\.mjs/.test(c))) {
    for (const [, file] of command.matchAll(/(?:^|\s)((?:src|bench|test)\/\S+\.ts)(?=\s|$)/g)) {
      if (file) files.add(file);
    }
  }
  for (const doc of ['README.md', ...docs()]) {
    for (const [, file] of readFileSync(doc, 'utf8').matchAll(/npx tsx (\S+\.ts)/g)) {
      if (file) files.add(file);
    }
  }
  return [...files].sort();
}

const docs = () =>
  readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);

const node = (file: string, args: string[]) =>
  run(process.execPath, ['--import', 'tsx', file, ...args], {
    env: { ...process.env, NODE_ENV: '' },
    timeout: 200_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }),
  );

describe('--help on every script', () => {
  const files = scriptFiles();

  test('the list holds the benches, the soak, the token and the Oracle tools', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'bench/live.ts',
        'bench/soak.ts',
        'src/mint-token.ts',
        'src/oracle-check/main.ts',
        'test/oracle/fixture.ts',
        'src/main.ts',
      ]),
    );
  });

  test.concurrent.each(files)(
    '%s --help prints its usage and exits 0',
    async (file) => {
      const result = await node(file, ['--help']);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^usage: \S/);
      expect(result.stdout).toContain('-h, --help');
      // Each loads its modules before it reads its arguments: seconds apiece on a loaded machine.
    },
    240_000,
  );

  test('an unknown option is named in one line, with the usage, and no stack trace', async () => {
    const result = await node('bench/live.ts', ['--subscriber', '5000']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^npm run bench:live --: Unknown option '--subscriber'/);
    expect(result.stderr).toContain('usage: npm run bench:live -- [options]');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  test('a bad value is refused the same way', async () => {
    const result = await node('bench/live.ts', ['--subscribers', 'many']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^npm run bench:live --: --subscribers takes whole numbers/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
