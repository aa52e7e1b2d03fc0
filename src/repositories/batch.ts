import type { Binds, Row, Statement } from '../db/driver.js';
import { chunk, inList } from '../db/sql/statement.js';
import type { OwnerAccess } from './views.js';

/**
 * The rows for many keys: one IN-list statement per 1,000 distinct keys, limited to what the
 * viewer may see (no statement at all when that is nothing). `execute` is the driver method
 * to use (a plain query, or one that adds agent details).
 */
export async function rowsForKeys(
  keys: readonly string[],
  prefix: string,
  access: OwnerAccess,
  build: (list: string, restricted: boolean) => Statement,
  execute: (statement: Statement, binds: Binds) => Promise<Row[]>,
): Promise<Row[]> {
  if (access.kind === 'nothing') return [];
  const restricted = access.kind === 'owner';
  const rows: Row[] = [];
  for (const batch of chunk([...new Set(keys)])) {
    const list = inList(prefix, batch);
    const binds = restricted ? { ...list.binds, ...access.binds } : list.binds;
    rows.push(...(await execute(build(list.text, restricted), binds)));
  }
  return rows;
}
