import { createHash } from 'node:crypto';

/**
 * The embedded database's cached data directory (src/db/embedded/database.ts), as stored:
 * PGlite's tar of it, uncompressed (gunzip cost a start more than reading the larger file),
 * without the template databases (CREATE DATABASE is all they serve, and nothing here
 * creates one: they were about 600 of its 1,035 files), sealed with a SHA-256 of the tar
 * after it. A start checks the seal, one pass over the bytes, instead of reading every table
 * to find out whether a damaged file slipped through.
 */

const BLOCK = 512;
/**
 * How snapshots are made, in the seal and in the file's name (database.ts, snapshotFile), so
 * that a start never loads one made the old way. v2: checkpointed before the dump, so that a
 * load has no write-ahead log to replay (v1's replayed about 4 MB of it on every start). v3:
 * 1 MB write-ahead-log segments (database.ts, INITDB_PARAMS), 14 MB instead of 28.
 */
export const SNAPSHOT_FORMAT = 'agent-graph snapshot v3';
const MAGIC = Buffer.from(`${SNAPSHOT_FORMAT}\n`);
const TRAILER = MAGIC.length + 32;

/** The entry's path in a ustar header: `prefix/name`, each NUL-terminated when shorter. */
function entryName(header: Uint8Array): string {
  const field = (start: number, length: number) => {
    const bytes = header.subarray(start, start + length);
    const end = bytes.indexOf(0);
    return Buffer.from(end < 0 ? bytes : bytes.subarray(0, end)).toString('utf8');
  };
  const name = field(0, 100);
  const prefix = field(345, 155);
  return prefix ? `${prefix}/${name}` : name;
}

function entrySize(header: Uint8Array): number {
  const text = Buffer.from(header.subarray(124, 136)).toString('ascii').replace(/\0.*$/, '').trim();
  return text === '' ? 0 : Number.parseInt(text, 8);
}

/**
 * `tar` without the entries under `directories` (relative paths, e.g. `base/1`, however the
 * archive roots them). A pax or GNU long-name header goes with the entry it describes.
 */
export function withoutDirectories(tar: Uint8Array, directories: readonly string[]): Uint8Array {
  const kept: Uint8Array[] = [];
  let pending: Uint8Array[] = [];
  let offset = 0;
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const length = BLOCK + Math.ceil(entrySize(header) / BLOCK) * BLOCK;
    const entry = tar.subarray(offset, offset + length);
    offset += length;
    const type = String.fromCharCode(header[156] ?? 0);
    if (type === 'x' || type === 'L' || type === 'K') {
      pending.push(entry);
      continue;
    }
    const name = entryName(header)
      .replace(/^\.?\//, '')
      .replace(/\/$/, '');
    const dropped = directories.some((dir) => name === dir || name.startsWith(`${dir}/`));
    if (!dropped) kept.push(...pending, entry);
    pending = [];
  }
  kept.push(new Uint8Array(BLOCK * 2));
  return Buffer.concat(kept);
}

/** The stored form: the tar, then the seal. */
export function sealed(tar: Uint8Array): Buffer {
  const digest = createHash('sha256').update(tar).digest();
  return Buffer.concat([tar, MAGIC, digest]);
}

/** The tar inside a stored snapshot; undefined when it is not one, or not whole. */
export function unsealed(stored: Buffer<ArrayBuffer>): Buffer<ArrayBuffer> | undefined {
  if (stored.length < TRAILER + BLOCK * 2) return undefined;
  const tar = stored.subarray(0, stored.length - TRAILER);
  const magic = stored.subarray(tar.length, tar.length + MAGIC.length);
  const digest = stored.subarray(tar.length + MAGIC.length);
  if (!magic.equals(MAGIC)) return undefined;
  if (!createHash('sha256').update(tar).digest().equals(digest)) return undefined;
  return tar;
}
