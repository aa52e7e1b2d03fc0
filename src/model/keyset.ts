/**
 * Keyset pagination's vocabulary, shared by the statements that read a page
 * (src/db/sql/pages.ts) and the cursors the schema hands out (src/schema/pagination.ts).
 */

/**
 * A column a keyset page is ordered by (the column itself, as SQL, is the statement's:
 * ColumnKey in src/db/sql/pages.ts). Nulls sort last in the list's order (so first when it
 * is read backwards), whatever the direction, on both databases.
 */
export interface SortKey {
  readonly direction: 'ASC' | 'DESC';
  /**
   * A TIMESTAMP: held to its full precision (microseconds on Oracle and PostgreSQL), which a
   * bound Date (milliseconds) lacks.
   */
  readonly date?: boolean;
}

/** A TIMESTAMP to its full precision: its millisecond and the digits of the seconds below it. */
export interface Instant {
  readonly at: Date;
  readonly belowMs: string;
}

export type KeyValue = string | Instant | null;

/** A row's place in a keyset order: its value of each SortKey, the unique last. */
export type Position = readonly KeyValue[];

export interface KeysetWindow {
  /** Rows that come after this place in the order. */
  readonly after?: Position;
  /** Rows that come before this place in the order. */
  readonly before?: Position;
  /** Read from the end of the order (the rows come back last first). */
  readonly backward: boolean;
  readonly limit: number;
  /**
   * False when no one reads the page's total (the operation selects no totalCount): a planned
   * page then skips counting, as PostGraphile counts only when asked. Counted when absent.
   */
  readonly counted?: boolean;
}

export interface Positioned<T> {
  readonly node: T;
  readonly position: Position;
}
