import type { Catalog } from '../catalog.js';
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

const IN_LIST_SIZES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, MAX_IN_LIST];

/**
 * `:prefix0, :prefix1, …` for an IN list, with the binds that go with it. The list is padded
 * (repeating the last value) to one of a few sizes, so Oracle's statement cache sees a
 * handful of texts instead of one per batch size.
 */
export function inList(
  prefix: string,
  values: readonly (string | number)[],
): { text: string; binds: Record<string, string | number> } {
  const last = values.at(-1);
  if (last === undefined || values.length > MAX_IN_LIST) {
    throw new RangeError(`an IN list takes 1 to ${MAX_IN_LIST} values, not ${values.length}`);
  }
  const size = IN_LIST_SIZES.find((s) => s >= values.length) ?? MAX_IN_LIST;
  const binds: Record<string, string | number> = {};
  const names: string[] = [];
  for (let i = 0; i < size; i++) {
    binds[`${prefix}${i}`] = values[i] ?? last;
    names.push(`:${prefix}${i}`);
  }
  return { text: names.join(', '), binds };
}

/** Splits keys into batches that each fit one IN list. */
export function chunk<T>(values: readonly T[], size = MAX_IN_LIST): T[][] {
  const batches: T[][] = [];
  for (let i = 0; i < values.length; i += size) batches.push(values.slice(i, i + size));
  return batches;
}

/** The bind that carries a non-admin viewer's database owner. */
export const OWNED_BY_VIEWER = ':viewer_owner';

export const PAGE = 'OFFSET :page_offset ROWS FETCH NEXT :page_limit ROWS ONLY';

export function whereClause(conditions: readonly string[]): string {
  return conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
}

/** Builds a module's statements once per catalog (repositories are made per request). */
export function perCatalog<T>(build: (catalog: Catalog) => T): (catalog: Catalog) => T {
  const built = new WeakMap<Catalog, T>();
  return (catalog) => {
    let value = built.get(catalog);
    if (value === undefined) {
      value = build(catalog);
      built.set(catalog, value);
    }
    return value;
  };
}
