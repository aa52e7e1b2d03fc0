/**
 * IN lists of binds: inList(prefix, values) is `:prefix0, :prefix1, …` with its binds;
 * fetchForKeys(...) sends one IN-list statement per 1,000 distinct keys.
 */

import type { Driver } from '../driver.js';
import { type Fragment, sql } from './fragment.js';
import { fetchRows, type Query } from './query.js';

/** Oracle rejects IN lists longer than this (ORA-01795). */
const MAX_IN_LIST = 1000;

const IN_LIST_SIZES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, MAX_IN_LIST];

/**
 * `:prefix0, :prefix1, …` for an IN list, with the binds that go with it. The list is padded
 * (repeating the last value) to one of a few sizes, so Oracle's statement cache sees a
 * handful of texts instead of one per batch size.
 */
export function inList(prefix: string, values: readonly (string | number)[]): Fragment {
  const last = values.at(-1);
  if (last === undefined || values.length > MAX_IN_LIST) {
    throw new RangeError(`an IN list takes 1 to ${MAX_IN_LIST} values, not ${values.length}`);
  }
  const size = IN_LIST_SIZES.find((s) => s >= values.length) ?? MAX_IN_LIST;
  if (size === values.length) return sql.bindList(prefix, values);
  // A loop, not Array.from({ length }, …), which took 0.6 us for a list of one (microbenchmark).
  const padded = values.slice();
  while (padded.length < size) padded.push(last);
  return sql.bindList(prefix, padded);
}

/** Splits keys into batches that each fit one IN list. */
function chunk<T>(values: readonly T[], size = MAX_IN_LIST): T[][] {
  const batches: T[][] = [];
  for (let i = 0; i < values.length; i += size) batches.push(values.slice(i, i + size));
  return batches;
}

/** The decoded rows for many keys: one IN-list statement per 1,000 distinct keys. */
export async function fetchForKeys<T>(
  driver: Driver,
  keys: readonly string[],
  prefix: string,
  build: (list: Fragment) => Query<T>,
): Promise<T[]> {
  const rows: T[] = [];
  for (const batch of chunk([...new Set(keys)])) {
    rows.push(...(await fetchRows(driver, build(inList(prefix, batch)))));
  }
  return rows;
}
