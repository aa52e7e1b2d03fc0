/**
 * Statements as values. Every statement a repository sends is one `Query`: its name, its
 * text, the binds its placeholders name and the decoder of its rows, built together so that
 * none can drift from another (as PostGraphile's pg-sql2 fragments carry their values).
 *
 * - sql`…` joins SQL text and fragments, and nothing else: a string interpolated into it is
 *   refused (by the type, and when it runs). Text enters a fragment in four ways only:
 *   the template's own text; sql.raw('…'), fixed text of the code, typed to take string
 *   literals only (sql.indexed('M', i) for a numbered name); sql.identifier(catalog, view,
 *   column), a name the discovered catalog holds; sql.argument(overload, name), an argument
 *   name ALL_ARGUMENTS listed for a discovered overload (discoveredOverload of the rows
 *   argumentsDecoder returned, never rows written by hand). A fragment is made only here.
 * - sql.bind(name, value) is the only way a value enters a statement: `:name` plus its
 *   bind, one name given two values throws as the fragment is built. inList(prefix, values)
 *   is an IN list of binds; sql.join(parts, separator); sql.placeholder(name) is a bind whose
 *   value the call gives (a block's).
 * - sql.where(...conditions) drops absent (undefined) conditions.
 * - ownedBy(...) / viewerOwns(...) is the owner rule, once: the condition that limits a view
 *   to one owner's rows. Where the view cannot hold that owner's rows, the condition is one
 *   no row meets: the query holding it is never sent and reads as no rows.
 * - query(name, body, decode) makes the value; fetchRows(driver, query) runs it and decodes.
 *   Its statement keeps the text cut at the binds, so that a driver numbering its binds ($1)
 *   writes its own text from the fragment without reading the SQL (src/db/driver.ts), and
 *   is one that only statement() makes (frozen, and kept in a set: a copy is not one; the
 *   type's mark is in src/db/driver.ts): the drivers run nothing else. blockText(...) is a
 *   PL/SQL block's text, lines kept; blockStatement(name, body) that text as a statement, its placeholders
 *   with it (a Block's Oracle side, src/db/driver.ts); enclosed(statement, before, after) a
 *   statement inside a driver's outer query.
 * - jsonArrayQuery(...) is a list whose rows the database returns as one JSON array;
 *   jsonListColumn(...) one such list among the several of a planned statement.
 * - paged(...) / fetchPage(...) is a page (OFFSET/FETCH plus the total over all pages) and
 *   the count sent only when the page lies past the last row; keysetParts(...) the pieces of
 *   a page that starts after (or ends before) a row's values of the order keys.
 * - fetchForKeys(...) sends one IN-list statement per 1,000 distinct keys.
 *
 * Statements are written once in the SQL that Oracle and PostgreSQL 18 both accept.
 */

import type {
  Instant,
  KeysetWindow,
  KeyValue,
  Position,
  Positioned,
  SortKey,
} from '../../model/keyset.js';
import { type Viewer, visibleOwner } from '../../model/viewer.js';
import { type Catalog, catalogViews, ownerColumn, type ViewInfo } from '../catalog.js';
import type { Binds, BindValue, Driver, Row, Statement } from '../driver.js';
import { camelCase, dateOrNull, jsonOrNull, num, strOrNull } from '../rows.js';

export type { Instant, KeysetWindow, KeyValue, Position, Positioned, SortKey };

/** A bind's place in the text; its value, if the fragment has one, is in `binds`. */
class Placeholder {
  constructor(readonly name: string) {}
}

const WHITE_SPACE = /\s+/g;

/**
 * Text of the code or the catalog, as written and with each run of white space one space:
 * made once per template call site and per text, so a statement's text is normalised without
 * a regular expression over it each time it is built.
 */
class Text {
  readonly spaced: string;
  constructor(readonly written: string) {
    this.spaced = written.replace(WHITE_SPACE, ' ');
  }
}

/** Text, a bind's place, or a fragment inside this one. */
type Part = Text | Placeholder | Fragment;

/** Only this module makes fragments: the token its constructor requires is not exported. */
const MINT = Symbol('sql fragment');

/** Where a fragment keeps its parts: a key no code outside this module holds. */
const PARTS = Symbol('parts');

const partsOf = (fragment: Fragment): readonly Part[] => fragment[PARTS];

/**
 * SQL text with the binds its placeholders name: what sql`…` and its helpers return, and the
 * only thing they take in. Its parts sit under a key only this module holds, and its binds
 * never change once made (a fragment may lend them to the one that holds it).
 */
export class Fragment {
  readonly [PARTS]: readonly Part[];

  constructor(
    token: typeof MINT,
    parts: readonly Part[],
    /** The values of its binds, by name. */
    readonly binds: Binds,
    /** Holds NO_ROWS: no row can match. */
    readonly noRows = false,
  ) {
    if (token !== MINT) throw new TypeError('fragments are made by sql`…` and its helpers');
    this[PARTS] = parts;
  }
}

/**
 * A string or number literal type (`'ASC'`, `'ASC' | 'DESC'`, `1`); never `string`, `number`
 * or a template type with a `${string}` hole: text the code wrote, not text it was given.
 */
export type Literal<T extends string | number> = T extends string
  ? // biome-ignore lint/complexity/noBannedTypes: {} is what a Record with an index signature extends
    {} extends Record<T, 1>
    ? never
    : T
  : number extends T
    ? never
    : T;

const same = (a: BindValue, b: BindValue) =>
  a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b;

function mergeBinds(into: Record<string, BindValue>, binds: Binds): void {
  // for…in, not Object.entries: IN lists carry hundreds of binds through every nesting level.
  for (const name in binds) {
    const value = binds[name] as BindValue;
    if (name in into && !same(into[name] as BindValue, value)) {
      throw new Error(
        `bind :${name} is given two different values in one statement: name one of them otherwise`,
      );
    }
    into[name] = value;
  }
}

function refuse(value: unknown): never {
  throw new TypeError(
    `sql\`…\` takes fragments only, not a ${value === null ? 'null' : typeof value}: a value goes in as sql.bind(name, value), a view or column name as sql.identifier(catalog, view, column), fixed text as sql.raw('…')`,
  );
}

const NO_BINDS: Binds = Object.freeze({});

/**
 * The binds of the parts, one object: a part's own when it alone has binds (a fragment's
 * binds never change once made), else merged. IN lists carry hundreds of binds through every
 * nesting level.
 */
function bindsOf(parts: readonly Fragment[]): Binds {
  let only: Binds | undefined;
  let merged: Record<string, BindValue> | undefined;
  for (const part of parts) {
    if (part.binds === NO_BINDS) continue;
    if (merged) mergeBinds(merged, part.binds);
    else if (only === undefined) only = part.binds;
    else {
      merged = { ...only };
      mergeBinds(merged, part.binds);
    }
  }
  return merged ?? only ?? NO_BINDS;
}

/** `strings[0]`, parts[0], `strings[1]`, …: the text around each part, as one fragment. */
function around(strings: readonly Text[], parts: readonly Fragment[]): Fragment {
  const all: Part[] = [];
  let noRows = false;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as Fragment;
    if (!(part instanceof Fragment)) refuse(part);
    const before = strings[i] as Text;
    if (before.written !== '') all.push(before);
    all.push(part);
    noRows ||= part.noRows;
  }
  const tail = strings[parts.length] as Text;
  if (tail.written !== '') all.push(tail);
  return new Fragment(MINT, all, bindsOf(parts), noRows);
}

/** Each call site's text, made once (a template's strings are the same array at every call). */
const sites = new WeakMap<TemplateStringsArray, readonly Text[]>();

function template(strings: TemplateStringsArray, ...parts: readonly Fragment[]): Fragment {
  let site = sites.get(strings);
  if (site === undefined) {
    // A call as a function with an array of text is not a template (whose strings are frozen):
    // its text is not the code's.
    if (
      !Array.isArray(strings) ||
      !Object.isFrozen(strings) ||
      !Array.isArray((strings as { raw?: unknown }).raw)
    ) {
      refuse(strings);
    }
    site = strings.map((written) => new Text(written));
    sites.set(strings, site);
  }
  // A template without parts is the same fragment at every call.
  return parts.length > 0 ? around(site, parts) : text((site[0] as Text).written);
}

/** Made once per text: texts are the code's and the catalog's, so they are few. */
const textParts = new Map<string, Text>();

function textPart(value: string): Text {
  let made = textParts.get(value);
  if (made === undefined) {
    made = new Text(value);
    textParts.set(value, made);
  }
  return made;
}

function join(parts: readonly Fragment[], separator: string): Fragment {
  const between = textPart(separator);
  const all: Part[] = [];
  let noRows = false;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as Fragment;
    if (!(part instanceof Fragment)) refuse(part);
    if (i > 0 && separator !== '') all.push(between);
    all.push(part);
    noRows ||= part.noRows;
  }
  return new Fragment(MINT, all, bindsOf(parts), noRows);
}

const texts = new Map<string, Fragment>();

/** Text of the code or the catalog: a fragment with no binds, made once per text. */
function text(value: string): Fragment {
  let made = texts.get(value);
  if (made === undefined) {
    made = new Fragment(MINT, value === '' ? [] : [textPart(value)], NO_BINDS);
    texts.set(value, made);
  }
  return made;
}

/** A condition no row meets: the query is not sent. */
const NO_ROWS = new Fragment(MINT, [textPart('1 = 0')], NO_BINDS, true);

const EMPTY = text('');

/** A plain upper-case Oracle name, as the dictionary spells unquoted ones. */
const PLAIN_NAME = /^[A-Z][A-Z0-9_$#]*$/;

/** Bind names are the code's: a letter or `_`, then letters, digits and `_`. */
const BIND_NAME = /^[A-Za-z_]\w*$/;

function bindName(name: string): string {
  if (!BIND_NAME.test(name)) throw new Error(`${JSON.stringify(name)} is not a bind name`);
  return name;
}

/**
 * PostgreSQL keeps the first 63 bytes of a longer name: the embedded database's dictionary
 * lists V$AGENT_EXEC_STAT's longest columns so, and resolves the whole name in a statement to
 * them (src/db/embedded/ddl.ts, pgColumn).
 */
const POSTGRES_NAME_LENGTH = 63;

const viewsOf = new WeakMap<Catalog, ReadonlySet<ViewInfo>>();

/**
 * A view of the catalog, or a column of one, as SQL text: the only names not written in the
 * code. The view must be one of the catalog's and the column one the view was found to have;
 * for a view not found (missing or not granted), where no statement over it is sent
 * (requireView, oracle:check), the column only has to be one plain name.
 */
function identifier(catalog: Catalog, view: ViewInfo, column?: string): Fragment {
  let views = viewsOf.get(catalog);
  if (views === undefined) {
    views = new Set(catalogViews(catalog));
    viewsOf.set(catalog, views);
  }
  if (!views.has(view) || !PLAIN_NAME.test(view.name)) {
    throw new Error(`sql.identifier: ${JSON.stringify(view.name)} is not a view of the catalog`);
  }
  if (column === undefined) return text(view.name);
  const known = view.columns
    ? view.columns.has(column) || view.columns.has(column.slice(0, POSTGRES_NAME_LENGTH))
    : PLAIN_NAME.test(column);
  if (!known) {
    throw new Error(
      `sql.identifier: ${JSON.stringify(column)} is not a column of ${view.name} in the catalog`,
    );
  }
  return text(column);
}

/** Where a subprogram keeps the argument names the dictionary listed: a key only this module holds. */
const ARGUMENTS = Symbol('arguments');

/**
 * One overload of a stored subprogram as ALL_ARGUMENTS lists it: the only source of the
 * argument names sql.argument writes into a call's text (named notation). Made by
 * discoveredOverload from the dictionary's rows (src/db/sql/execute-agent.ts).
 */
export class Overload {
  readonly [ARGUMENTS]: ReadonlySet<string>;

  constructor(
    token: typeof MINT,
    /** The subprogram as the code names it (`DBMS_AI_AGENT.EXECUTE_AGENT`). */
    readonly subprogram: string,
    argumentNames: ReadonlySet<string>,
  ) {
    if (token !== MINT) throw new TypeError('overloads are made by discoveredOverload');
    this[ARGUMENTS] = argumentNames;
  }
}

/** The type's mark of a row argumentsDecoder returned: a key no code outside this module holds. */
declare const LISTED: unique symbol;

/**
 * One ALL_ARGUMENTS row as its decoder returns it: the argument's name, null for a return
 * value. A row written by hand lacks the mark, so is a type error; a copy keeps it, and is
 * refused when the overload is made.
 */
export interface ListedArgument {
  readonly argumentName: string | null;
  readonly [LISTED]: true;
}

/** The rows an ALL_ARGUMENTS decoder returned: the only rows discoveredOverload takes. */
const listedRows = new WeakSet<ListedArgument>();

/**
 * The decoder of ALL_ARGUMENTS rows (executeAgentArguments, src/db/sql/execute-agent.ts), its
 * rows marked as read from the dictionary: a row written by hand, or a copy of one, is not.
 */
export function argumentsDecoder<T extends { readonly argumentName: string | null }>(
  decode: (row: Row) => T,
): (row: Row) => T & ListedArgument {
  return (row) => {
    // The mark is the type's only: the set is what is checked.
    const decoded = Object.freeze(decode(row)) as T & ListedArgument;
    listedRows.add(decoded);
    return decoded;
  };
}

/**
 * The overload whose ALL_ARGUMENTS rows these are (each one argumentsDecoder returned): its
 * named arguments, each a plain upper-case name (a quoted or lower-case one is refused, so
 * none needs quoting).
 */
export function discoveredOverload<S extends string>(
  subprogram: Literal<S>,
  rows: readonly ListedArgument[],
): Overload {
  const names = new Set<string>();
  for (const row of rows) {
    if (!listedRows.has(row)) {
      throw new Error(
        `the arguments of ${subprogram} are the rows ALL_ARGUMENTS returned (argumentsDecoder), not rows written by hand`,
      );
    }
    const { argumentName } = row;
    if (argumentName === null) continue;
    if (!PLAIN_NAME.test(argumentName) || argumentName.length > 128) {
      throw new Error(`argument name ${argumentName} is not a plain identifier`);
    }
    names.add(argumentName);
  }
  return new Overload(MINT, subprogram, names);
}

/** An argument of a discovered overload, as SQL text: only a name ALL_ARGUMENTS listed for it. */
function argument(overload: Overload, name: string): Fragment {
  if (!(overload instanceof Overload) || !overload[ARGUMENTS].has(name)) {
    throw new Error(
      `sql.argument: ${JSON.stringify(name)} is not an argument of ${overload?.subprogram} as ALL_ARGUMENTS lists it`,
    );
  }
  return text(name);
}

/** The tag and its helpers, one import (as pg-sql2's `sql.value()`, `sql.join()`). */
export const sql = Object.assign(template, {
  /** `:name`, carrying its value: the only way a value enters a statement. */
  bind: (name: string, value: BindValue): Fragment =>
    new Fragment(MINT, [new Placeholder(bindName(name))], { [name]: value }),
  /** `:name` whose value the caller gives when the statement runs (a block's IN and OUT binds). */
  placeholder: (name: string): Fragment =>
    new Fragment(MINT, [new Placeholder(bindName(name))], NO_BINDS),
  /** Fixed text of the code: a string (or number) literal, never a string it was given. */
  raw: <T extends string | number>(value: Literal<T>): Fragment => {
    if (typeof value !== 'string' && typeof value !== 'number') refuse(value);
    return text(String(value));
  },
  identifier,
  argument,
  /** A numbered name of the code's (`M0`, `KEY1`): its prefix, a literal, and a whole number. */
  indexed: <P extends string>(prefix: Literal<P>, index: number): Fragment => {
    if (!Number.isSafeInteger(index) || index < 0) refuse(index);
    return text(`${prefix}${index}`);
  },
  join: <S extends string>(parts: readonly Fragment[], separator: Literal<S>): Fragment =>
    join(parts, separator),
  /** `WHERE a AND b …` over the conditions present; empty text when none is. */
  where(...conditions: readonly (Fragment | undefined)[]): Fragment {
    const present = conditions.filter((c): c is Fragment => c !== undefined);
    return present.length === 0 ? EMPTY : template`WHERE ${join(present, ' AND ')}`;
  },
});

/** The text and placeholders of a fragment being compiled; `piece` is the text so far. */
interface Compiled {
  readonly pieces: string[];
  readonly placeholders: string[];
  piece: string;
  /** The piece ends with a space: a text starting with one continues that run of space. */
  space: boolean;
  readonly asWritten: boolean;
}

function walk(fragment: Fragment, into: Compiled): void {
  for (const part of partsOf(fragment)) {
    if (part instanceof Text) {
      if (into.asWritten) {
        into.piece += part.written;
        continue;
      }
      let spaced = part.spaced;
      if (into.space && spaced.charCodeAt(0) === 32) spaced = spaced.slice(1);
      if (spaced === '') continue;
      into.piece += spaced;
      into.space = spaced.charCodeAt(spaced.length - 1) === 32;
    } else if (part instanceof Placeholder) {
      into.pieces.push(into.piece);
      into.placeholders.push(part.name);
      into.piece = '';
      into.space = false;
    } else walk(part, into);
  }
}

/**
 * The fragment's text cut at its binds: `pieces[0]`, bind `placeholders[0]`, `pieces[1]`, …,
 * with every run of white space one space and the ends trimmed unless `asWritten`. A
 * placeholder holds no white space, so this is what normalising the whole text gives.
 */
function compile(body: Fragment, asWritten = false): { pieces: string[]; placeholders: string[] } {
  const into: Compiled = { pieces: [], placeholders: [], piece: '', space: false, asWritten };
  walk(body, into);
  into.pieces.push(into.piece);
  const { pieces, placeholders } = into;
  if (!asWritten) {
    pieces[0] = (pieces[0] as string).trimStart();
    pieces[pieces.length - 1] = (pieces.at(-1) as string).trimEnd();
  }
  return { pieces, placeholders };
}

/** Oracle's text of the pieces: each bind written `:name`. */
function named({ pieces, placeholders }: { pieces: string[]; placeholders: string[] }): string {
  let text = pieces[0] as string;
  for (let i = 0; i < placeholders.length; i++) text += `:${placeholders[i]}${pieces[i + 1]}`;
  return text;
}

/**
 * The statements built here, each frozen: a copy (`{ ...made, text }` keeps the mark) is a
 * new object, so not one of them, and a statement cannot be changed once made.
 */
const madeHere = new WeakSet<Statement>();

/** What a statement holds, less the type's mark (src/db/driver.ts), which only made() gives. */
type Unmarked = Pick<Statement, 'name' | 'text' | 'pieces' | 'placeholders' | 'orderedBy'>;

function made(statement: Unmarked): Statement {
  Object.freeze(statement.pieces);
  Object.freeze(statement.placeholders);
  if (statement.orderedBy) Object.freeze(statement.orderedBy);
  // The one cast to Statement: the mark is a type, the WeakSet what built() checks.
  const sealed = Object.freeze({ ...statement }) as unknown as Statement;
  madeHere.add(sealed);
  return sealed;
}

/** The statement, if statement() built it: the drivers' check before they send one. */
export function built<S extends Pick<Statement, 'name'>>(sent: S): S {
  if (!madeHere.has(sent as unknown as Statement)) {
    throw new TypeError(
      `statement ${JSON.stringify(sent?.name)} was not built by statement() or query() (src/db/sql/statement.ts)`,
    );
  }
  return sent;
}

/** A named statement of the fragment: Oracle's text (`:name` binds) and its pieces. */
export function statement(name: string, body: Fragment, orderedBy?: readonly string[]): Statement {
  const { pieces, placeholders } = compile(body);
  const text = named({ pieces, placeholders });
  return made(
    orderedBy
      ? { name, text, pieces, placeholders, orderedBy: [...orderedBy] }
      : { name, text, pieces, placeholders },
  );
}

/**
 * A built statement inside a driver's fixed text (an outer query), its binds and order
 * unchanged: the embedded driver's DESCRIBE_AGENT wrapper (src/db/embedded/database.ts), which
 * runs numbered pieces, where Oracle's wrapper is text only (src/db/oracle/driver.ts).
 */
export function enclosed(inner: Statement, before: string, after: string): Statement {
  const { name, text, pieces, placeholders, orderedBy } = built(inner);
  const around = [...pieces];
  around[0] = before + around[0];
  around[around.length - 1] += after;
  const outer = {
    name,
    text: before + text + after,
    pieces: around,
    placeholders: [...placeholders],
  };
  return made(orderedBy ? { ...outer, orderedBy: [...orderedBy] } : outer);
}

/**
 * A PL/SQL block's text (or the embedded database's DDL) as written, line for line (Oracle's
 * compile errors name a line), its binds written `:name`: Oracle binds a block by name itself.
 */
export function blockText(body: Fragment): string {
  return named(compile(body, true));
}

/** A PL/SQL block as a named statement: its blockText, and the placeholders that cut it. */
export function blockStatement(name: string, body: Fragment): Statement {
  const { pieces, placeholders } = compile(body, true);
  return made({ name, text: named({ pieces, placeholders }), pieces, placeholders });
}

/** A statement ready to send: text, binds, and what each row becomes. */
export interface Query<T> {
  readonly statement: Statement;
  readonly binds: Binds;
  readonly decode: (row: Row) => T;
  /**
   * The values of what the driver returned: `decode` of each row, or of each positional row
   * of the JSON array a jsonArrayQuery statement returns.
   */
  readonly decodeRows: (rows: readonly Row[]) => T[];
  /** Sent through queryWithAgentDetails, which adds each row's DESCRIBE_AGENT JSON. */
  readonly agentDetails: boolean;
  /** Never sent: a condition can match no row. */
  readonly noRows: boolean;
}

const COMMA = textPart(', ');

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
  const binds: Record<string, string | number> = {};
  const parts: Part[] = [];
  for (let i = 0; i < size; i++) {
    const name = bindName(`${prefix}${i}`);
    binds[name] = values[i] ?? last;
    if (i > 0) parts.push(COMMA);
    parts.push(new Placeholder(name));
  }
  return new Fragment(MINT, parts, binds);
}

/** Splits keys into batches that each fit one IN list. */
function chunk<T>(values: readonly T[], size = MAX_IN_LIST): T[][] {
  const batches: T[][] = [];
  for (let i = 0; i < values.length; i += size) batches.push(values.slice(i, i + size));
  return batches;
}

/** The condition on an owner column (`h.TEAM_OWNER`, …) that keeps one owner's rows. */
export type OwnerCondition = <C extends string>(column: Literal<C>) => Fragment | undefined;

/**
 * The owner rule, written once: the rows of `view` that belong to `owner`. A view with an
 * owner column binds the owner (`column = :bindName`); a USER_ view has no owner column and
 * holds only the session user's rows, so it needs no condition for that user and has no row
 * of anyone else's. No owner (null) means no condition.
 */
export function ownedBy(
  catalog: Catalog,
  view: ViewInfo,
  ownerColumns: readonly string[],
  owner: string | null | undefined,
  bindName: string,
): OwnerCondition {
  if (!owner) return () => undefined;
  if (ownerColumn(view, ownerColumns))
    return (column) => sql`${text(column)} = ${sql.bind(bindName, owner)}`;
  return owner === catalog.sessionUser ? () => undefined : () => NO_ROWS;
}

/** What a viewer may read of a view: the rows of its visibleOwner (src/model/viewer.ts). */
export function viewerOwns(
  catalog: Catalog,
  view: ViewInfo,
  viewer: Pick<Viewer, 'admin' | 'owner'>,
  ownerColumns: readonly string[] = ['OWNER'],
): OwnerCondition {
  return ownedBy(catalog, view, ownerColumns, visibleOwner(viewer), 'viewer_owner');
}

export interface QueryValueOptions {
  /** Send through queryWithAgentDetails. */
  readonly agentDetails?: boolean;
  /** The output columns the rows are ordered by, repeated by the driver's outer query. */
  readonly orderedBy?: readonly string[];
}

export function query<T>(
  name: string,
  body: Fragment,
  decode: (row: Row) => T,
  options: QueryValueOptions = {},
): Query<T> {
  return {
    statement: statement(name, body, options.orderedBy),
    binds: body.binds,
    decode,
    decodeRows: (rows) => rows.map(decode),
    agentDetails: options.agentDetails ?? false,
    noRows: body.noRows,
  };
}

/**
 * The output name of a select-list item: its alias, or the column it names (`h.TEAM_NAME`),
 * read from the item's own text (a fragment's, so a name the code or the catalog wrote).
 */
export function outputName(item: Fragment): string {
  let name = outputNames.get(item);
  if (name !== undefined) return name;
  const { pieces, placeholders } = compile(item);
  name = placeholders.length === 0 ? /(\w+)$/.exec(pieces[0] as string)?.[1] : undefined;
  if (name === undefined)
    throw new Error(`select item without an output name: ${pieces.join('?')}`);
  outputNames.set(item, name);
  return name;
}

const outputNames = new WeakMap<Fragment, string>();

/** The output names of select-list items, as the items of a query over them. */
export function outputsOf(items: readonly Fragment[]): Fragment[] {
  return items.map((item) => text(outputName(item)));
}

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
  /** Output names that order the array (ascending). */
  readonly orderBy: readonly string[];
}

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
 * NULL ON NULL on the outer array keeps every column at its position (ABSENT ON NULL, the
 * default, would drop a column that came back NULL), and the count is what positionalDecoder
 * checks every column's length against.
 */
function jsonArraySelect(name: string, parts: JsonArrayParts, alias: string): Fragment {
  const selected = new Set(parts.select.map(outputName));
  if (selected.has(SEQUENCE)) throw new Error(`${name}: ${SEQUENCE} names the list's sequence`);
  // Member and order names become text: only names the select list's own text ends with.
  const named = (prefix: 's' | 'q') => (output: string) => {
    if (!selected.has(output)) throw new Error(`${name}: ${output} is not selected`);
    return text(`${prefix}.${output}`);
  };
  const order = join(parts.orderBy.map(named('s')), ', ');
  const members = parts.members ?? [...selected];
  const columns = members.map(
    (member) =>
      sql`JSON_ARRAYAGG(${named('q')(member)} ORDER BY q.SEQ NULL ON NULL RETURNING CLOB)`,
  );
  return sql`SELECT JSON_ARRAY(COUNT(*), ${join(columns, ', ')} NULL ON NULL RETURNING CLOB) AS ${text(alias)}
        FROM (SELECT ${join(members.map(named('s')), ', ')}, ROW_NUMBER() OVER (ORDER BY ${order}) AS SEQ
          FROM (SELECT ${join(parts.select, ', ')} FROM ${parts.from}) s) q`;
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
  const keys = (parts.members ?? parts.select.map(outputName)).map(camelCase);
  return (json) => {
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
    ...query(name, jsonArraySelect(name, parts, 'ROWS_JSON'), decode),
    decodeRows: (rows) => rows.flatMap((row) => decodeArray(row.rowsJson)),
  };
}

/** One list of a planned statement (jsonListColumn): its rows' parts and their decoder. */
export interface JsonList<T> {
  readonly parts: JsonArrayParts;
  readonly decode: (row: Row) => T;
}

/**
 * One list of a statement of several (src/db/sql/history-plan.ts): its select-list item
 * `(SELECT JSON_ARRAY(…) …) AS L<index>_JSON`, the camelCase key its row holds it under, and
 * the decoder of that value. The columns are scalar subqueries of DUAL (Oracle's one-row
 * table; emulated in the embedded database), so no list multiplies another's rows and each is
 * still one CLOB.
 */
export function jsonListColumn<T>(
  name: string,
  list: JsonList<T>,
  index: number,
): { readonly select: Fragment; readonly key: string; readonly decode: (json: unknown) => T[] } {
  const alias = `L${index}_JSON`;
  return {
    select: sql`(${jsonArraySelect(name, list.parts, alias)}) AS ${sql.indexed('L', index)}_JSON`,
    key: camelCase(alias),
    decode: positionalDecoder(name, list.parts, list.decode),
  };
}

export async function fetchRows<T>(driver: Driver, q: Query<T>): Promise<T[]> {
  if (q.noRows) return [];
  const rows = q.agentDetails
    ? await driver.queryWithAgentDetails(q.statement, q.binds)
    : await driver.query(q.statement, q.binds);
  return q.decodeRows(rows);
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

function positionOf(keys: readonly SortKey[], row: Row): Position {
  return keys.map((key, i) => {
    if (!key.date) return strOrNull(row[`key${i}`]);
    const at = dateOrNull(row[`key${i}`]);
    const seconds = row[`key${i}Seconds`];
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
 * order keys as select items (KEY0, KEY0_SECONDS, …), the WHERE of the filter and the place,
 * the ORDER BY, the filtered FROM the total counts over, and the position of a row read back.
 */
export function keysetParts(
  parts: {
    readonly from: Fragment;
    readonly filter: readonly (Fragment | undefined)[];
    readonly keys: readonly ColumnKey[];
  },
  window: KeysetWindow,
): {
  readonly keyColumns: Fragment;
  readonly keyOutputs: readonly string[];
  readonly where: Fragment;
  readonly orderBy: Fragment;
  readonly filtered: Fragment;
  readonly position: (row: Row) => Position;
} {
  const { from, filter, keys } = parts;
  const keyItems = keys.flatMap((key, i) => [
    sql`${key.column} AS ${text(`KEY${i}`)}`,
    ...(key.date ? [sql`${secondsOf(key.column)} AS ${text(`KEY${i}_SECONDS`)}`] : []),
  ]);
  const orderBy = keys.map(({ column, direction }, i) => {
    const nulls = i === keys.length - 1 ? '' : window.backward ? ' NULLS FIRST' : ' NULLS LAST';
    const reversed = direction === 'ASC' ? 'DESC' : 'ASC';
    return sql`${column} ${text(`${window.backward ? reversed : direction}${nulls}`)}`;
  });
  return {
    keyColumns: join(keyItems, ', '),
    keyOutputs: keyItems.map(outputName),
    where: sql.where(
      ...filter,
      window.after ? beyond(keys, window.after, true, 'after') : undefined,
      window.before ? beyond(keys, window.before, false, 'before') : undefined,
    ),
    orderBy: join(orderBy, ', '),
    filtered: sql`${from} ${sql.where(...filter)}`,
    position: (row) => positionOf(keys, row),
  };
}

export async function fetchPage<T>(driver: Driver, paging: PagedQuery<T>): Promise<Page<T>> {
  const rows = await fetchRows(driver, paging.page);
  const first = rows[0];
  const totalCount = first ? first.totalCount : ((await fetchRows(driver, paging.count))[0] ?? 0);
  return { items: rows.map((row) => row.item), totalCount };
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
