import { copyFile, mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { snapshotFile } from '../src/db/embedded/database.js';
import { startTestServer } from './support/server.js';

/** The snapshot global-setup built (or found) in the default cache directory. */
function builtSnapshot(): { path: string; name: string } {
  const database = loadConfig({}).database;
  if (database.kind !== 'embedded') throw new Error('embedded only');
  const path = snapshotFile(database.cacheDir);
  return { path, name: basename(path) };
}

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

describe('a damaged snapshot in EMBEDDED_CACHE_DIR', () => {
  test.each([
    ['truncated to half', (path: string, size: number) => truncate(path, size >> 1)],
    ['its last 100 bytes missing', (path: string, size: number) => truncate(path, size - 100)],
    ['not a snapshot at all', (path: string) => writeFile(path, 'not a tarball')],
    ['zeros', (path: string) => writeFile(path, Buffer.alloc(65_536))],
    [
      'one byte changed in the middle',
      async (path: string, size: number) => {
        const bytes = await readFile(path);
        bytes[size >> 1] = (bytes[size >> 1] ?? 0) ^ 0xff;
        await writeFile(path, bytes);
      },
    ],
  ])(
    '%s: discarded with one log line naming it, seeded again, and the server answers',
    async (_case, damage) => {
      const built = builtSnapshot();
      const cacheDir = await mkdtemp(join(tmpdir(), 'agent-graph-cache-'));
      dirs.push(cacheDir);
      const path = join(cacheDir, built.name);
      await copyFile(built.path, path);
      await damage(path, (await stat(path)).size);

      const t = await startTestServer({ EMBEDDED_CACHE_DIR: cacheDir });
      try {
        expect(t.server.database.embedded?.fromSnapshot).toBe(false);
        const { data, errors } = await t.post('{ agents(first: 1) { totalCount } }');
        expect(errors).toBeUndefined();
        expect(data).toEqual({ agents: { totalCount: expect.any(Number) } });
        const warnings = t.logs.filter((line) => line.msg.includes('embedded snapshot'));
        expect(warnings).toHaveLength(1);
        expect(warnings[0]?.level).toBe(40);
        expect(warnings[0]?.msg).toContain(path);
        // A fresh snapshot replaced the damaged one, and it is whole.
        expect((await stat(path)).size).toBeGreaterThan(1_000_000);
      } finally {
        await t.stop();
      }
    },
  );
});

// The load hands PGlite the file's bytes through its own Blob (TarBlob in
// src/db/embedded/database.ts): were PGlite to read that Blob another way, every start would
// discard the snapshot and seed again, and only this would say so.
test('an intact snapshot is loaded, not discarded and seeded again', async () => {
  const built = builtSnapshot();
  const cacheDir = await mkdtemp(join(tmpdir(), 'agent-graph-cache-'));
  dirs.push(cacheDir);
  await copyFile(built.path, join(cacheDir, built.name));

  const t = await startTestServer({ EMBEDDED_CACHE_DIR: cacheDir });
  try {
    expect(t.server.database.embedded?.fromSnapshot).toBe(true);
    expect(t.logs.filter((line) => line.msg.includes('embedded snapshot'))).toEqual([]);
    const { errors } = await t.post('{ agents(first: 1) { totalCount } }');
    expect(errors).toBeUndefined();
  } finally {
    await t.stop();
  }
});
