import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';

const run = promisify(execFile);

/** A script, and how a user runs it: through scripts/run.mjs (as npm start does) or tsx. */
interface Script {
  readonly file: string;
  readonly runner: 'run.mjs' | 'tsx';
}

/**
 * Every script a user is told to run: each package.json script that runs a TypeScript file,
 * run the way that script runs it, and each `npx tsx <file>.ts` the README and docs/ show. A
 * new one is covered without a change here.
 */
function scripts(): Script[] {
  const found = new Map<string, Script['runner']>();
  const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as {
    scripts: Record<string, string>;
  };
  // Those that run a file of ours through tsx or scripts/run.mjs (vitest's are vitest's).
  for (const command of Object.values(scripts)) {
    const runner = /\brun\.mjs\b/.test(command)
      ? 'run.mjs'
      : /\btsx\b/.test(command)
        ? 'tsx'
        : null;
    if (!runner) continue;
    for (const [, file] of command.matchAll(/(?:^|\s)((?:src|bench|test)\/\S+\.ts)(?=\s|$)/g)) {
      if (file) found.set(file, runner);
    }
  }
  for (const doc of ['README.md', ...docs()]) {
    for (const [, file] of readFileSync(doc, 'utf8').matchAll(/npx tsx (\S+\.ts)/g)) {
      if (file && !found.has(file)) found.set(file, 'tsx');
    }
  }
  return [...found]
    .map(([file, runner]) => ({ file, runner }))
    .sort((a, b) => a.file.localeCompare(b.file));
}

const docs = () =>
  readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);

const node = ({ file, runner }: Script, args: string[]) =>
  run(
    process.execPath,
    runner === 'tsx' ? ['--import', 'tsx', file, ...args] : ['scripts/run.mjs', file, ...args],
    { env: { ...process.env, NODE_ENV: '' }, timeout: 200_000 },
  ).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }),
  );

const BENCH_LIVE: Script = { file: 'bench/live.ts', runner: 'tsx' };

describe('--help on every script', () => {
  const list = scripts();

  test('the list holds the benches, the soak, the token and the Oracle tools', () => {
    expect(list).toEqual(
      expect.arrayContaining([
        { file: 'bench/live.ts', runner: 'tsx' },
        { file: 'bench/soak.ts', runner: 'tsx' },
        { file: 'src/mint-token.ts', runner: 'run.mjs' },
        { file: 'src/oracle-check/main.ts', runner: 'run.mjs' },
        { file: 'test/oracle/fixture.ts', runner: 'tsx' },
        { file: 'src/main.ts', runner: 'run.mjs' },
      ]),
    );
  });

  test.concurrent.each(list.map((script) => [script.file, script] as const))(
    '%s --help prints its usage and exits 0',
    async (_file, script) => {
      const result = await node(script, ['--help']);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^usage: \S/);
      expect(result.stdout).toContain('-h, --help');
      // Each loads its modules before it reads its arguments: seconds apiece on a loaded machine.
    },
    240_000,
  );

  test('an unknown option is named in one line, with the usage, and no stack trace', async () => {
    const result = await node(BENCH_LIVE, ['--subscriber', '5000']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^npm run bench:live --: Unknown option '--subscriber'/);
    expect(result.stderr).toContain('usage: npm run bench:live -- [options]');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  test('a bad value is refused the same way', async () => {
    const result = await node(BENCH_LIVE, ['--subscribers', 'many']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^npm run bench:live --: --subscribers takes whole numbers/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
