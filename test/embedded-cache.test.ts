import {
  access,
  copyFile,
  mkdtemp,
  readFile,
  rm,
  stat,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import {
  clusterFile,
  compiledPGliteWasm,
  loadSnapshot,
  snapshotFile,
} from '../src/db/embedded/database.js';
import { startTestServer } from './support/server.js';

/** The snapshot global-setup built (or found) in the default cache directory. */
function builtSnapshot(): { path: string; name: string; cacheDir: string } {
  const database = loadConfig({}).database;
  if (database.kind !== 'embedded') throw new Error('embedded only');
  const path = snapshotFile(database.cacheDir);
  return { path, name: basename(path), cacheDir: database.cacheDir };
}

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/** A cache directory of its own holding a copy of the built snapshot. */
async function copiedSnapshot(): Promise<{ cacheDir: string; path: string }> {
  const built = builtSnapshot();
  const cacheDir = await mkdtemp(join(tmpdir(), 'agent-graph-cache-'));
  dirs.push(cacheDir);
  const path = join(cacheDir, built.name);
  await copyFile(built.path, path);
  return { cacheDir, path };
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

type Damage = (path: string, size: number) => Promise<void>;

const damages: [string, Damage][] = [
  ['truncated to half', (path, size) => truncate(path, size >> 1)],
  ['its last 100 bytes missing', (path, size) => truncate(path, size - 100)],
  ['not a snapshot at all', (path) => writeFile(path, 'not a tarball')],
  ['zeros', (path) => writeFile(path, Buffer.alloc(65_536))],
  [
    'one byte changed in the middle',
    async (path, size) => {
      const bytes = await readFile(path);
      bytes[size >> 1] = (bytes[size >> 1] ?? 0) ^ 0xff;
      await writeFile(path, bytes);
    },
  ],
];

async function damaged(damage: Damage): Promise<{ cacheDir: string; path: string }> {
  const copy = await copiedSnapshot();
  await damage(copy.path, (await stat(copy.path)).size);
  return copy;
}

// Each kind of damage at the loader's own boundary (what a start calls first, in the database
// thread); the whole server's answer to one of them, seeding again, is the test after these.
describe('a damaged snapshot in EMBEDDED_CACHE_DIR', () => {
  test.each(damages)(
    '%s: is not loaded, and is deleted with one warning naming it',
    async (_case, damage) => {
      const { path } = await damaged(damage);
      const warnings: string[] = [];
      const loaded = await loadSnapshot(path, await compiledPGliteWasm(), (message) =>
        warnings.push(message),
      );
      expect(loaded).toBeUndefined();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(path);
      expect(warnings[0]).toContain('deleting it and seeding again');
      expect(await exists(path)).toBe(false);
    },
  );

  // The load hands PGlite the file's bytes through its own Blob (TarBlob in
  // src/db/embedded/database.ts): were PGlite to read that Blob another way, every start would
  // discard the snapshot and seed again, and only the second start here would say so.
  test('a server discards it with one log line naming it, seeds again, answers, and the next start loads the new snapshot', async () => {
    const built = builtSnapshot();
    const { cacheDir, path } = await damaged(damages[0]?.[1] as Damage);
    // The empty cluster the seeding starts from, when global-setup's cache has one (it does
    // after a seeding there, as on a fresh clone); first-start.test.ts shows initdb's path.
    const cluster = clusterFile(built.cacheDir);
    const clusterCached = await exists(cluster);
    if (clusterCached) await copyFile(cluster, clusterFile(cacheDir));

    const seeding = await startTestServer({ EMBEDDED_CACHE_DIR: cacheDir });
    try {
      expect(seeding.server.database.embedded?.fromSnapshot).toBe(false);
      const { data, errors } = await seeding.post('{ agents(first: 1) { totalCount } }');
      expect(errors).toBeUndefined();
      expect(data).toEqual({ agents: { totalCount: expect.any(Number) } });
      const warnings = seeding.logs.filter((line) => line.msg.includes('embedded snapshot'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.level).toBe(40);
      expect(warnings[0]?.msg).toContain(path);
      const seeded = seeding.logs.find((line) => line.msg.startsWith('embedded database seeded'));
      expect(seeded?.initdb).toBe(!clusterCached);
    } finally {
      await seeding.stop();
    }

    // A fresh snapshot replaced the damaged one, and it is whole: the next start loads it.
    const loading = await startTestServer({ EMBEDDED_CACHE_DIR: cacheDir });
    try {
      expect(loading.server.database.embedded?.fromSnapshot).toBe(true);
      expect(loading.logs.filter((line) => line.msg.includes('embedded snapshot'))).toEqual([]);
      const { data, errors } = await loading.post('{ agents(first: 1) { totalCount } }');
      expect(errors).toBeUndefined();
      expect(data).toEqual({ agents: { totalCount: expect.any(Number) } });
    } finally {
      await loading.stop();
    }
  });
});

// A data directory PostgreSQL of another PGlite wrote fails to open: were the names blind to the
// version, every start after an upgrade would warn and seed again until the file was deleted.
test('the cached snapshot and cluster are named for the PGlite that wrote them', async () => {
  const { version } = JSON.parse(
    await readFile(
      new URL('../node_modules/@electric-sql/pglite/package.json', import.meta.url),
      'utf8',
    ),
  ) as { version: string };
  const { cacheDir } = builtSnapshot();
  expect(basename(snapshotFile(cacheDir))).toMatch(
    new RegExp(`^pglite-${version}-[0-9a-f]{16}\\.tar$`),
  );
  expect(basename(clusterFile(cacheDir))).toMatch(
    new RegExp(`^pglite-cluster-${version}-[0-9a-f]{16}\\.tar$`),
  );
});
