import type { Statement } from '../driver.js';

/**
 * Statements are written once in the SQL that Oracle and PostgreSQL 18 both accept. Values
 * are always `:name` binds; only fixed fragments chosen from whitelists vary the text.
 */
export function statement(name: string, text: string): Statement {
  return { name, text: text.replace(/\s+/g, ' ').trim() };
}

/** Oracle rejects IN lists longer than this (ORA-01795). */
export const MAX_IN_LIST = 1000;

/** `:prefix0, :prefix1, …` for an IN list, with the binds that go with it. */
export function inList(
  prefix: string,
  values: readonly (string | number)[],
): { text: string; binds: Record<string, string | number> } {
  if (values.length === 0 || values.length > MAX_IN_LIST) {
    throw new RangeError(`an IN list takes 1 to ${MAX_IN_LIST} values, not ${values.length}`);
  }
  const binds: Record<string, string | number> = {};
  const names = values.map((value, i) => {
    binds[`${prefix}${i}`] = value;
    return `:${prefix}${i}`;
  });
  return { text: names.join(', '), binds };
}

/** Splits keys into batches that each fit one IN list. */
export function chunk<T>(values: readonly T[], size = MAX_IN_LIST): T[][] {
  const batches: T[][] = [];
  for (let i = 0; i < values.length; i += size) batches.push(values.slice(i, i + size));
  return batches;
}

export const PAGE = 'OFFSET :page_offset ROWS FETCH NEXT :page_limit ROWS ONLY';

export function whereClause(conditions: readonly string[]): string {
  return conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
}
