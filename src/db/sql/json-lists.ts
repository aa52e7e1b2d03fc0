/**
 * Lists the database returns as one JSON array of columns: jsonArrayQuery(...) is a list as
 * its own statement; jsonListColumn(...) one such list among the several of a planned
 * statement (src/db/sql/history-plan.ts). A list whose array is not that shape throws
 * MisalignedList before a row is decoded.
 */

import type { Row } from '../driver.js';
import { camelCase, jsonOrNull } from '../rows.js';
import { type Fragment, outputName, outputsOf, sql } from './fragment.js';
import { type Query, query } from './query.js';

export interface JsonArrayParts {
  /**
   * Select-list items of the inner query, each ending with its output name
   * (`NULL AS TASK_OWNER`, `h.STATE`): the members, and the columns the array is ordered by.
   */
  readonly select: readonly Fragment[];
  /** Output names that become each row's members, in this order; every select item's by default. */
  readonly members?: readonly string[];
  /** `FROM` onwards, without ORDER BY. */
  readonly from: Fragment;
  /** What orders the array: output names (ascending), or a name with its direction. */
  readonly orderBy: readonly ListOrder[];
  /**
   * No two rows share their values of `orderBy` (it ends in a key, or in a number the
   * statement gives each row): every aggregate orders by it, and no sequence is numbered.
   */
  readonly totalOrder: boolean;
  /**
   * A member holding each row's parent as its index in the parent's list (listPositions),
   * and the property the reader fills from the parents' values at that index.
   */
  readonly parentPosition?: { readonly member: string; readonly property: string };
}

/**
 * A column a list is ordered by, with its direction and where its nulls go, as a keyset page
 * orders its rows (src/db/sql/pages.ts): a list in the order of the rows it reads is one
 * PostgreSQL need not sort again.
 */
export interface OrderedColumn {
  readonly output: string;
  readonly direction: 'ASC' | 'DESC';
  /** Where its nulls go, when not where the direction puts them by default. */
  readonly nulls?: 'FIRST' | 'LAST';
}

export type ListOrder = string | OrderedColumn;

/** The output name a list's order reads. */
export const orderOutput = (order: ListOrder): string =>
  typeof order === 'string' ? order : order.output;

/** The name of the sequence a JSON list's columns are ordered by (jsonArraySelect). */
const SEQUENCE = 'SEQ';

/**
 * `SELECT JSON_ARRAY(COUNT(*), JSON_ARRAYAGG(q.A ORDER BY q.SEQ …), JSON_ARRAYAGG(q.B ORDER BY
 * q.SEQ …), … NULL ON NULL) AS <alias> FROM (SELECT s.A, s.B, …, ROW_NUMBER() OVER (ORDER BY
 * s.<orderBy>) AS SEQ FROM (SELECT … FROM …) s) q`: one list as one JSON array of columns,
 * each column the list's values of one member in the list's order, after the row count.
 * Columns rather than an array per row: the database builds a handful of arrays instead of
 * one per row (PGlite's CPU for a dashboard's history tree: 5.9 → 4.8 ms), the JSON repeats
 * no brackets per row, the client parses and copies a few arrays instead of thousands, and a
 * CLOB member goes into its column's CLOB with no per-row JSON value (on Oracle no temporary
 * LOB per row, whatever the members).
 *
 * The values of row i stand at index i of each column only if every aggregate puts the rows
 * in the same order. Each JSON_ARRAYAGG sorts on its own, and an ORDER BY promises nothing
 * about rows whose keys tie (a task logged twice under one TASK_ORDER, a NULL key): one
 * aggregate's sort may spill and merge where another's stays in memory, and a tie would then
 * put one row's values under another's. So the order is made total once per row, by the
 * sequence ROW_NUMBER gives in the query below the aggregates (distinct whatever the keys),
 * and every aggregate orders by that number: tied rows come in an arbitrary order, whole.
 * A list whose order is already total (`totalOrder`: the run list by TEAM_EXEC_ID, a keyset
 * page by its keys, a team's window by its row number, the tool calls ending in
 * INVOCATION_ID) puts its rows in one order in every
 * aggregate without it, so it numbers nothing: its aggregates order by its own keys, and the
 * database sorts its rows once instead of sorting them for the numbering, then again by the
 * number (a window and a sort fewer per list).
 * NULL ON NULL on the outer array keeps every column at its position (ABSENT ON NULL, the
 * default, would drop a column that came back NULL), and the count is what positionalDecoder
 * checks every column's length against.
 */
function jsonArraySelect(name: string, parts: JsonArrayParts, alias: Fragment): Fragment {
  const outputs = outputsOf(parts.select);
  const selected = new Map(parts.select.map((item, i) => [outputName(item), outputs[i]]));
  if (selected.has(SEQUENCE)) throw new Error(`${name}: ${SEQUENCE} names the list's sequence`);
  // Member and order names become text: only names the select list's own text ends with.
  const named = (prefix: 's' | 'q') => (output: string) => {
    const selectedName = selected.get(output);
    if (selectedName === undefined) throw new Error(`${name}: ${output} is not selected`);
    return sql`${sql.raw(prefix)}.${selectedName}`;
  };
  const ordered = (prefix: 's' | 'q') => (order: ListOrder) =>
    orderedColumn(named(prefix)(orderOutput(order)), order);
  const members = parts.members ?? [...selected.keys()];
  const aggregates = (order: Fragment) =>
    sql.join(
      members.map(
        (member) =>
          sql`JSON_ARRAYAGG(${named('q')(member)} ORDER BY ${order} NULL ON NULL RETURNING CLOB)`,
      ),
      ', ',
    );
  if (parts.totalOrder) {
    return sql`SELECT JSON_ARRAY(COUNT(*), ${aggregates(sql.join(parts.orderBy.map(ordered('q')), ', '))} NULL ON NULL RETURNING CLOB) AS ${alias}
        FROM (SELECT ${sql.join(parts.select, ', ')} FROM ${parts.from}) q`;
  }
  const order = sql.join(parts.orderBy.map(ordered('s')), ', ');
  return sql`SELECT JSON_ARRAY(COUNT(*), ${aggregates(sql`q.SEQ`)} NULL ON NULL RETURNING CLOB) AS ${alias}
        FROM (SELECT ${sql.join(members.map(named('s')), ', ')}, ROW_NUMBER() OVER (ORDER BY ${order}) AS SEQ
          FROM (SELECT ${sql.join(parts.select, ', ')} FROM ${parts.from}) s) q`;
}

/**
 * `ROW_NUMBER() OVER (ORDER BY <the list's order>) - 1`: in a query over the list's `from`,
 * each row's index in the list jsonArraySelect builds of `parts`. The list's order is total
 * and the numbering reads the same rows in the same order as the list's aggregates, so the
 * index is the row's in every column of the list, on Oracle and PostgreSQL alike: a list below
 * it names its parent by that index (a number) instead of the parent's key (a 32-character run
 * id per task and tool call, which the database writes as JSON and the serving thread parses
 * and groups by). The order's columns are read by their output names: a list whose select
 * items are its source's columns by name (a list over a common table).
 */
export function listPosition(name: string, parts: JsonArrayParts): Fragment {
  if (!parts.totalOrder) throw new Error(`${name}: positions need a list in a total order`);
  const outputs = outputsOf(parts.select);
  const selected = new Map(parts.select.map((item, i) => [outputName(item), outputs[i]]));
  const ordered = (order: ListOrder) => {
    const column = selected.get(orderOutput(order));
    if (column === undefined) throw new Error(`${name}: ${orderOutput(order)} is not selected`);
    return orderedColumn(column, order);
  };
  return sql`ROW_NUMBER() OVER (ORDER BY ${sql.join(parts.orderBy.map(ordered), ', ')}) - 1`;
}

/** A column of an order with its direction and where its nulls go (OrderedColumn). */
function orderedColumn(column: Fragment, order: ListOrder): Fragment {
  if (typeof order === 'string') return column;
  const nulls =
    order.nulls === undefined ? '' : order.nulls === 'FIRST' ? ' NULLS FIRST' : ' NULLS LAST';
  return sql`${column} ${sql.raw(order.direction === 'DESC' ? 'DESC' : 'ASC')}${sql.raw(nulls)}`;
}

/**
 * A JSON list that is not the shape jsonArraySelect builds: a column whose length is not the
 * row count, a column missing. Its message names the statement and the member, never a value.
 */
export class MisalignedList extends Error {
  override readonly name = 'MisalignedList';
}

/**
 * The decoded rows of one JSON array of columns (jsonArraySelect: the row count, then the
 * members in `parts` order): row i's values, at index i of each column, are copied into one
 * reused object under the members' camelCase names, the keys `decode` reads, so a row costs
 * the model object `decode` makes and nothing more (every decoder builds a new object from
 * the row's values; none keeps the row). A NULL column is one whose every value is null (over
 * no rows, every column); any other column holds exactly one value per row. Any other shape
 * throws MisalignedList before a row is decoded: a column one value short would otherwise
 * give every later row its neighbour's value.
 */
function positionalDecoder<T>(
  name: string,
  parts: JsonArrayParts,
  decode: (row: Row) => T,
): (json: unknown) => T[] {
  const read = positionalReader(name, parts);
  return (json) => read(json, decode);
}

/**
 * positionalDecoder's reading, with the row decoder given at each read; a list whose rows name
 * their parent by its position (`parentPosition`) is given the parents' values of the property
 * it fills, in the parent list's order.
 */
function positionalReader(name: string, parts: JsonArrayParts): ListReader {
  const keys = (parts.members ?? parts.select.map(outputName)).map(camelCase);
  const position = parts.parentPosition && {
    key: camelCase(parts.parentPosition.member),
    property: parts.parentPosition.property,
  };
  return <T>(json: unknown, decode: (row: Row) => T, parents: readonly unknown[] = []) => {
    const list = jsonOrNull(json);
    if (!Array.isArray(list) || list.length !== keys.length + 1) {
      throw new MisalignedList(
        `${name}: expected the row count and ${keys.length} columns, got ${Array.isArray(list) ? `${list.length} members` : typeof list}`,
      );
    }
    const count = list[0];
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) {
      throw new MisalignedList(`${name}: the row count is not a whole number`);
    }
    const columns = list.slice(1) as readonly (readonly unknown[] | null)[];
    for (let i = 0; i < keys.length; i++) {
      const values = columns[i];
      if (values !== null && (!Array.isArray(values) || values.length !== count)) {
        throw new MisalignedList(
          `${name}: column ${keys[i]} holds ${Array.isArray(values) ? values.length : typeof values} values for ${count} rows`,
        );
      }
    }
    const row: Record<string, unknown> = {};
    for (const key of keys) row[key] = null;
    const decoded = new Array<T>(count);
    for (let r = 0; r < count; r++) {
      for (let i = 0; i < keys.length; i++) row[keys[i] as string] = columns[i]?.[r];
      if (position) {
        const index = row[position.key];
        if (typeof index !== 'number' || !(index in parents)) {
          throw new MisalignedList(`${name}: row ${r} names no parent of ${parents.length}`);
        }
        row[position.property] = parents[index];
      }
      decoded[r] = decode(row);
    }
    return decoded;
  };
}

/**
 * A list returned as one row holding one JSON array: the row count, then one column per
 * member in `members` order (jsonArraySelect), built by the database: PGlite then builds and
 * decodes one value instead of every field of thousands of rows, without repeating a key per
 * member, and Oracle sends one CLOB instead of a fetch per 100 rows. The same SQL:2016 text
 * runs on both: CLOB is Oracle's type (beyond 4,000 bytes), a domain over json in the
 * embedded database (plsql.ts), whose driver may hand the array over parsed. No rows read as
 * `[0, null, …]`. Dates arrive as ISO text, which dateOrNull reads.
 */
export function jsonArrayQuery<T>(
  name: string,
  parts: JsonArrayParts,
  decode: (row: Row) => T,
): Query<T> {
  const decodeArray = positionalDecoder(name, parts, decode);
  return {
    ...query(name, jsonArraySelect(name, parts, sql`ROWS_JSON`), decode),
    decodeRows: (rows) => rows.flatMap((row) => decodeArray(row.rowsJson)),
  };
}

/** Reads a list's JSON with the rows' decoder and, for `parentPosition`, its parents' values. */
export type ListReader = <T>(
  json: unknown,
  decode: (row: Row) => T,
  parents?: readonly unknown[],
) => T[];

/** One list of a planned statement (jsonListColumn): its rows' parts and their decoder. */
export interface JsonList<T> {
  readonly parts: JsonArrayParts;
  readonly decode: (row: Row) => T;
}

/**
 * One list of a statement of several (src/db/sql/history-plan.ts): its select-list item
 * `(SELECT JSON_ARRAY(…) …) AS L<index>_JSON`, the camelCase key its row holds it under, and
 * the reader of that value, given the rows' decoder at each read (a statement built once
 * serves requests whose root rows decode with their own page's positions). The columns are scalar subqueries of DUAL (Oracle's one-row
 * table; emulated in the embedded database), so no list multiplies another's rows and each is
 * still one CLOB.
 */
export function jsonListColumn(
  name: string,
  parts: JsonArrayParts,
  index: number,
): {
  readonly select: Fragment;
  readonly key: string;
  readonly read: ListReader;
} {
  const alias = sql`${sql.indexed('L', index)}_JSON`;
  return {
    select: sql`(${jsonArraySelect(name, parts, alias)}) AS ${alias}`,
    key: camelCase(`L${index}_JSON`),
    read: positionalReader(name, parts),
  };
}
