/**
 * Pages: paged(...) / fetchPage(...) is a page by OFFSET/FETCH plus the total over all pages,
 * the count sent only when the page lies past the last row; keysetParts(...) the pieces of a
 * page that starts after (or ends before) a row's values of the order keys (a planned
 * statement's root, src/db/sql/history-plan.ts).
 */

import type { Instant, KeysetWindow, Position, Positioned, SortKey } from '../../model/keyset.js';
import type { Driver, Row } from '../driver.js';
import { dateOrNull, num, strOrNull } from '../rows.js';
import { type Fragment, outputName, sql } from './fragment.js';
import type { OrderedColumn } from './json-lists.js';
import { fetchRows, type Query, type QueryValueOptions, query } from './query.js';

export interface Page<T> {
  readonly items: T[];
  readonly totalCount: number;
}

export interface PageWindow {
  readonly offset: number;
  readonly limit: number;
}

export interface PagedQuery<T> {
  readonly page: Query<{ readonly item: T; readonly totalCount: number }>;
  readonly count: Query<number>;
}

/**
 * One page in one statement, named `name`: `select` plus the total over all pages
 * (COUNT(*) OVER ()), `FROM from` in `orderBy` order, OFFSET/FETCH by binds. A page past the
 * last row carries no total; `count` then counts: a statement of that name counting over the
 * same FROM and WHERE, or a query of the caller's.
 */
export function paged<T>(
  name: string,
  parts: {
    readonly select: Fragment;
    readonly from: Fragment;
    readonly orderBy: Fragment;
    readonly count: string | Query<number>;
  },
  window: PageWindow,
  decode: (row: Row) => T,
  options: QueryValueOptions = {},
): PagedQuery<T> {
  const { select, from, orderBy, count } = parts;
  return {
    page: query(
      name,
      sql`SELECT ${select}, COUNT(*) OVER () AS TOTAL_COUNT FROM ${from} ORDER BY ${orderBy}
        OFFSET ${sql.bind('page_offset', window.offset)} ROWS FETCH NEXT ${sql.bind('page_limit', window.limit)} ROWS ONLY`,
      (row) => ({ item: decode(row), totalCount: num(row.totalCount) }),
      options,
    ),
    count:
      typeof count === 'string'
        ? query(count, sql`SELECT COUNT(*) AS TOTAL_COUNT FROM ${from}`, (row) =>
            num(row.totalCount),
          )
        : count,
  };
}

/** A keyset order's column: the key, and the column or expression it reads. */
export interface ColumnKey extends SortKey {
  readonly column: Fragment;
}

const secondsOf = (column: Fragment) => sql`EXTRACT(SECOND FROM ${column})`;

/**
 * The seconds of an instant as EXTRACT(SECOND) gives them (12.123456): what a bound Date
 * cannot say below the millisecond is compared this way, inside that one millisecond.
 */
const secondsBind = (name: string, instant: Instant) =>
  sql.bind(
    name,
    Number(
      `${instant.at.getUTCSeconds()}.${String(instant.at.getUTCMilliseconds()).padStart(3, '0')}${instant.belowMs}`,
    ),
  );

/** `column op value` for op `<`, `>` or `=`, exact to the microsecond for dates. */
function compare(
  key: ColumnKey,
  op: '<' | '>' | '=',
  value: string | Instant,
  name: string,
): Fragment {
  const column = key.column;
  if (typeof value === 'string') return sql`${column} ${sql.raw(op)} ${sql.bind(name, value)}`;
  const at = sql.bind(name, value.at);
  const next = sql.bind(`${name}_next`, new Date(value.at.getTime() + 1));
  const seconds = secondsBind(`${name}_s`, value);
  const inMs = secondsOf(column);
  if (op === '=') return sql`(${column} >= ${at} AND ${column} < ${next} AND ${inMs} = ${seconds})`;
  return op === '>'
    ? sql`(${column} >= ${next} OR (${column} >= ${at} AND ${inMs} > ${seconds}))`
    : sql`(${column} < ${at} OR (${column} < ${next} AND ${inMs} < ${seconds}))`;
}

/**
 * Rows strictly after (`later`) or before a place in the order: the expanded form of the row
 * comparison `(k1, k2) > (:a, :b)`, which Oracle does not have, with nulls last.
 */
function beyond(
  keys: readonly ColumnKey[],
  place: Position,
  later: boolean,
  prefix: string,
): Fragment {
  const level = (i: number): Fragment => {
    const key = keys[i] as ColumnKey;
    const value = place[i] ?? null;
    const name = `${prefix}${i}`;
    const op = (key.direction === 'ASC') === later ? '>' : '<';
    // The last key is unique, hence never null.
    if (i === keys.length - 1) return compare(key, op, value ?? '', name);
    let past: Fragment | undefined;
    if (value === null) past = later ? undefined : sql`${key.column} IS NOT NULL`;
    else if (later) past = sql`(${compare(key, op, value, name)} OR ${key.column} IS NULL)`;
    else past = compare(key, op, value, name);
    const same = value === null ? sql`${key.column} IS NULL` : compare(key, '=', value, name);
    const rest = sql`${same} AND ${level(i + 1)}`;
    return past ? sql`(${past} OR (${rest}))` : sql`(${rest})`;
  };
  return level(0);
}

/**
 * A row of a keyset page and its place in the order, worked out when a cursor is written
 * (src/schema/pagination.ts) from the key values read with the row: most pages write no
 * cursor, and a place costs a Date and an Instant per date key.
 */
class PositionedRow<T> implements Positioned<T> {
  #position: Position | undefined;

  constructor(
    readonly node: T,
    private readonly keys: readonly SortKey[],
    private readonly values: readonly unknown[],
  ) {}

  get position(): Position {
    this.#position ??= positionOf(this.keys, this.values);
    return this.#position;
  }
}

/** The row keys of each sort key's values: `key<i>`, then `key<i>Seconds` for a date. */
function keyNames(keys: readonly SortKey[]): string[] {
  return keys.flatMap((key, i) => (key.date ? [`key${i}`, `key${i}Seconds`] : [`key${i}`]));
}

/** A place from the values keyNames names, in that order. */
function positionOf(keys: readonly SortKey[], values: readonly unknown[]): Position {
  let next = 0;
  return keys.map((key) => {
    const value = values[next++];
    if (!key.date) return strOrNull(value);
    const seconds = values[next++];
    const at = dateOrNull(value);
    if (at === null || seconds === null || seconds === undefined) return null;
    return instant(at, typeof seconds === 'number' ? seconds.toFixed(9) : String(seconds));
  });
}

/**
 * The instant from a fetched date and EXTRACT(SECOND) of the same value ("12.123456"): the
 * millisecond comes from the seconds too, whichever way the driver rounded the date.
 */
function instant(fetched: Date, seconds: string): Instant {
  const [whole = '0', fraction = ''] = seconds.split('.');
  const digits = fraction.replace(/0+$/, '');
  const minute = fetched.getTime() - (fetched.getTime() % 60_000);
  let at = minute + Number(whole) * 1000 + Number(digits.slice(0, 3).padEnd(3, '0'));
  if (at - fetched.getTime() > 30_000) at -= 60_000;
  if (fetched.getTime() - at > 30_000) at += 60_000;
  return { at: new Date(at), belowMs: digits.slice(3) };
}

/**
 * The pieces of a keyset page (a planned statement's root, src/db/sql/history-plan.ts): the
 * order keys as select items (KEY0, KEY0_SECONDS, …), each key item's column, the WHERE of
 * the filter and the place, the ORDER BY, the filtered FROM the total counts over, and a row
 * read back with its place.
 */
export function keysetParts(
  parts: {
    readonly from: Fragment;
    readonly filter: readonly (Fragment | undefined)[];
    readonly keys: readonly ColumnKey[];
  },
  window: KeysetWindow,
): KeysetOrder & { readonly where: Fragment; readonly filtered: Fragment } {
  const { from, filter, keys } = parts;
  const ordered = orderedBy(keys, window.backward);
  return {
    ...ordered,
    where: sql.where(
      ...filter,
      window.after ? beyond(keys, window.after, true, 'after') : undefined,
      window.before ? beyond(keys, window.before, false, 'before') : undefined,
    ),
    filtered: sql`${from} ${sql.where(...filter)}`,
  };
}

/** What a keyset page's text and rows take from its keys and direction, whatever its window. */
interface KeysetOrder {
  readonly keyColumns: Fragment;
  readonly keyOutputs: readonly string[];
  /** KEY0, KEY1, …, each with the column it repeats (the seconds repeat none). */
  readonly keyCopies: readonly (readonly [string, Fragment])[];
  readonly orderBy: Fragment;
  /** The same order on KEY0, KEY1, …: a list of the page's rows in the page's order. */
  readonly keyOrder: readonly OrderedColumn[];
  readonly positioned: <T>(node: T, row: Row) => Positioned<T>;
}

/**
 * Made once per keys and direction (the keys of an order are made once: runOrderKeys,
 * TOOL_CALL_ORDER_KEYS), so a page builds only its filter and its place.
 */
const keysetOrders = new WeakMap<
  readonly ColumnKey[],
  Partial<Record<'forward' | 'backward', KeysetOrder>>
>();

function orderedBy(keys: readonly ColumnKey[], backward: boolean): KeysetOrder {
  let byDirection = keysetOrders.get(keys);
  if (byDirection === undefined) {
    byDirection = {};
    keysetOrders.set(keys, byDirection);
  }
  const direction = backward ? 'backward' : 'forward';
  const known = byDirection[direction];
  if (known !== undefined) return known;
  const valueItems = keys.map((key, i) => sql`${key.column} AS ${sql.indexed('KEY', i)}`);
  const keyItems = keys.flatMap((key, i) => [
    valueItems[i] as Fragment,
    ...(key.date ? [sql`${secondsOf(key.column)} AS ${sql.indexed('KEY', i)}_SECONDS`] : []),
  ]);
  // The last key is unique, hence never null.
  const keyOrder = keys.map(({ direction }, i): OrderedColumn => {
    const output = outputName(valueItems[i] as Fragment);
    const reversed = direction === 'ASC' ? 'DESC' : 'ASC';
    const ordered = { output, direction: backward ? reversed : direction } as const;
    if (i === keys.length - 1) return ordered;
    return { ...ordered, nulls: backward ? 'FIRST' : 'LAST' };
  });
  const orderBy = keys.map(({ column }, i) => {
    const { direction, nulls } = keyOrder[i] as OrderedColumn;
    const nullsText = nulls === undefined ? '' : nulls === 'FIRST' ? ' NULLS FIRST' : ' NULLS LAST';
    return sql`${column} ${sql.raw(direction === 'DESC' ? 'DESC' : 'ASC')}${sql.raw(nullsText)}`;
  });
  const names = keyNames(keys);
  const made: KeysetOrder = {
    keyColumns: sql.join(keyItems, ', '),
    keyOutputs: keyItems.map(outputName),
    keyCopies: keys.map((key, i) => [outputName(valueItems[i] as Fragment), key.column] as const),
    orderBy: sql.join(orderBy, ', '),
    keyOrder,
    // The row is the reader's, reused for the next row: its key values are copied out.
    positioned: (node, row) =>
      new PositionedRow(
        node,
        keys,
        names.map((name) => row[name]),
      ),
  };
  byDirection[direction] = made;
  return made;
}

export async function fetchPage<T>(driver: Driver, paging: PagedQuery<T>): Promise<Page<T>> {
  const rows = await fetchRows(driver, paging.page);
  const first = rows[0];
  const totalCount = first ? first.totalCount : ((await fetchRows(driver, paging.count))[0] ?? 0);
  return { items: rows.map((row) => row.item), totalCount };
}
