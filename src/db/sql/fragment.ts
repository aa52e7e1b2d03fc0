/**
 * SQL fragments: text with the binds its placeholders name, made only in this module (as
 * PostGraphile's pg-sql2 fragments carry their values). Statements are built from them
 * (src/db/sql/query.ts).
 *
 * - sql`…` joins SQL text and fragments, and nothing else: a string interpolated into it is
 *   refused (by the type, and when it runs). Text enters a fragment in four ways only:
 *   the template's own text; sql.raw('…'), fixed text of the code, typed to take string
 *   literals only (sql.indexed('M', i) for a numbered name); sql.identifier(catalog, view,
 *   column), a name the discovered catalog holds; sql.argument(overload, name), an argument
 *   name ALL_ARGUMENTS listed for a discovered overload (discoveredOverload of the rows
 *   argumentsDecoder returned, never rows written by hand). A fragment is made only here.
 * - sql.bind(name, value) is the only way a value enters a statement: `:name` plus its
 *   bind, one name given two values throws as the fragment is built (sql.bindList(prefix,
 *   values): many at once, an IN list's). sql.join(parts, separator); sql.placeholder(name)
 *   is a bind whose value the call gives (a block's).
 * - sql.where(...conditions) drops absent (undefined) conditions; NO_ROWS is the condition no
 *   row meets, and a fragment holding it is never sent (`noRows`).
 * - compile(fragment) is its text cut at its binds, what a statement keeps; outputName(item)
 *   the output name a select-list item's own text ends with.
 * - A fragment's text and the places of its binds, without their values, are its Shape,
 *   interned as the fragment is made: two fragments built alike share one, so what is worked
 *   out from the text (a statement, src/db/sql/query.ts; an output name; shapeId, the key of
 *   a planned statement's cache) is worked out once per shape, and a request builds no text.
 */

import { type Catalog, catalogViews, type ViewInfo } from '../catalog.js';
import type { Binds, BindValue, Row } from '../driver.js';

/** A bind's place in the text; its value, if the fragment has one, is in `binds`. */
class Placeholder {
  constructor(readonly name: string) {}
}

const WHITE_SPACE = /\s+/g;

/**
 * Text of the code or the catalog, as written and with each run of white space one space:
 * made once per text (textPart), so a statement's text is normalised without a regular
 * expression over it each time it is built, and equal text is one part of a shape.
 */
class Text {
  readonly spaced: string;
  constructor(readonly written: string) {
    this.spaced = written.replace(WHITE_SPACE, ' ');
  }
}

/** Text, a bind's place, or the shape of a fragment inside this one. */
type Part = Text | Placeholder | Shape;

/**
 * The most shapes interned at once: every statement shape seen, its prefixes and its nested
 * fragments' (oracle:check's registry, 788 statements over a DBA_ and a USER_ catalog, interns
 * 14,764), about 200 bytes each, so 10 MB at the most. Past it, interning starts afresh: shapes
 * made before stay correct, only no longer shared with those made after.
 */
const MAX_SHAPES = 50_000;

/**
 * What decides a fragment's text: its parts, without the values of its binds. A shape is its
 * last part after the shape of the parts before it (`parent`), interned there (extend), so
 * fragments built alike get the same object, found by one lookup per part: a shape is never
 * compared, and never changes once made.
 */
class Shape {
  /**
   * Shapes one part longer than this one, by that part: the interning. Most shapes have one
   * (a template's text after a part), kept without a map.
   */
  firstPart: Part | undefined;
  first: Shape | undefined;
  next: Map<Part, Shape> | undefined;
  /** outputName's answer, worked out once. */
  outputName: string | undefined;
  /** Unique for the process's life: a key that outlives a fresh start of the interning. */
  readonly id = ++shapesMade;

  constructor(
    readonly parent: Shape | undefined,
    readonly last: Part | undefined,
  ) {}
}

let shapesMade = 0;
let interned = 0;
/** The empty shape the current interning starts from. */
let root = new Shape(undefined, undefined);

/** Drops every interned link from `from` down (not the shapes: fragments may still hold them). */
function forget(from: Shape): void {
  const stack = [from];
  for (let shape = stack.pop(); shape; shape = stack.pop()) {
    if (shape.first) stack.push(shape.first);
    for (const next of shape.next?.values() ?? []) stack.push(next);
    shape.firstPart = shape.first = shape.next = undefined;
  }
}

/** `shape` then `part`: the interned shape, made the first time. */
function extend(shape: Shape, part: Part): Shape {
  if (part instanceof Shape && part.last === undefined) return shape;
  if (shape.firstPart === part) return shape.first as Shape;
  let next = shape.next?.get(part);
  if (next === undefined) {
    next = new Shape(shape, part);
    if (++interned > MAX_SHAPES) {
      forget(root);
      root = new Shape(undefined, undefined);
      interned = 0;
      bindShapes.clear();
      bindListShapes.clear();
    } else if (shape.firstPart === undefined) {
      shape.firstPart = part;
      shape.first = next;
    } else {
      shape.next ??= new Map();
      shape.next.set(part, next);
    }
  }
  return next;
}

/** Only this module makes fragments: the token its constructor requires is not exported. */
const MINT = Symbol('sql fragment');

/** Where a fragment keeps its shape: a key no code outside this module holds. */
const SHAPE = Symbol('shape');

/**
 * SQL text with the binds its placeholders name: what sql`…` and its helpers return, and the
 * only thing they take in. Its shape sits under a key only this module holds, and its binds
 * never change once made (a fragment may lend them to the one that holds it).
 */
export class Fragment {
  readonly [SHAPE]: Shape;

  constructor(
    token: typeof MINT,
    shape: Shape,
    /** The values of its binds, by name. */
    readonly binds: Binds,
    /** Holds NO_ROWS: no row can match. */
    readonly noRows = false,
  ) {
    if (token !== MINT) throw new TypeError('fragments are made by sql`…` and its helpers');
    this[SHAPE] = shape;
  }
}

/**
 * A number two fragments share only if they have one text and one bind at each place (their
 * values aside): equal for fragments built alike (since the interning last started afresh,
 * MAX_SHAPES), so a key of what their text decides.
 */
export function shapeId(fragment: Fragment): number {
  return fragment[SHAPE].id;
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
  let shape = root;
  let noRows = false;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as Fragment;
    if (!(part instanceof Fragment)) refuse(part);
    const before = strings[i] as Text;
    if (before.written !== '') shape = extend(shape, before);
    shape = extend(shape, part[SHAPE]);
    noRows ||= part.noRows;
  }
  const tail = strings[parts.length] as Text;
  if (tail.written !== '') shape = extend(shape, tail);
  return new Fragment(MINT, shape, bindsOf(parts), noRows);
}

/** Each call site's text, found once (a template's strings are the same array at every call). */
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
    // One Text per text, whichever site wrote it: equal text, one shape.
    site = strings.map(textPart);
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
  let shape = root;
  let noRows = false;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as Fragment;
    if (!(part instanceof Fragment)) refuse(part);
    if (i > 0 && separator !== '') shape = extend(shape, between);
    shape = extend(shape, part[SHAPE]);
    noRows ||= part.noRows;
  }
  return new Fragment(MINT, shape, bindsOf(parts), noRows);
}

const texts = new Map<string, Fragment>();

/** Text of the code or the catalog: a fragment with no binds, made once per text. */
function text(value: string): Fragment {
  let made = texts.get(value);
  if (made === undefined) {
    made = new Fragment(MINT, value === '' ? root : extend(root, textPart(value)), NO_BINDS);
    texts.set(value, made);
  }
  return made;
}

/** The shape of `:name`, by name: the name is checked once. */
const bindShapes = new Map<string, Shape>();

function bindShape(name: string): Shape {
  let shape = bindShapes.get(name);
  if (shape === undefined) {
    shape = extend(root, new Placeholder(bindName(name)));
    bindShapes.set(name, shape);
  }
  return shape;
}

/** The shape of `:prefix0, :prefix1, …`, by prefix and length (an IN list's sizes are few). */
const bindListShapes = new Map<string, Shape[]>();

function bindListShape(prefix: string, length: number): Shape {
  let shapes = bindListShapes.get(prefix);
  if (shapes === undefined) {
    shapes = [];
    bindListShapes.set(prefix, shapes);
  }
  let shape = shapes[length];
  if (shape === undefined) {
    shape = root;
    for (let i = 0; i < length; i++) {
      if (i > 0) shape = extend(shape, COMMA);
      shape = extend(shape, bindShape(`${prefix}${i}`));
    }
    shapes[length] = shape;
  }
  return shape;
}

/** A condition no row meets: the query is not sent. */
export const NO_ROWS = new Fragment(MINT, extend(root, textPart('1 = 0')), NO_BINDS, true);

const EMPTY = text('');

const COMMA = textPart(', ');

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
  bind: (name: string, value: BindValue): Fragment => {
    // Set on an empty object: a computed key in an object literal cost five times as much.
    const binds: Record<string, BindValue> = {};
    binds[name] = value;
    return new Fragment(MINT, bindShape(name), binds);
  },
  /**
   * `:prefix0, :prefix1, …`, each carrying its value: what sql.bind of each value joined by
   * commas gives, made in one pass (an IN list carries up to 1,000; src/db/sql/in-lists.ts).
   */
  bindList: (prefix: string, values: readonly BindValue[]): Fragment => {
    const shape = bindListShape(prefix, values.length);
    const binds: Record<string, BindValue> = {};
    for (let i = 0; i < values.length; i++) binds[`${prefix}${i}`] = values[i] as BindValue;
    return new Fragment(MINT, shape, binds);
  },
  /** `:name` whose value the caller gives when the statement runs (a block's IN and OUT binds). */
  placeholder: (name: string): Fragment => new Fragment(MINT, bindShape(name), NO_BINDS),
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

function walk(shape: Shape, into: Compiled): void {
  // A shape holds its last part only: its parts, first to last, are read back up the chain.
  const parts: Part[] = [];
  for (let at = shape; at.last !== undefined; at = at.parent as Shape) parts.push(at.last);
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i] as Part;
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
export function compile(
  body: Fragment,
  asWritten = false,
): { pieces: string[]; placeholders: string[] } {
  const into: Compiled = { pieces: [], placeholders: [], piece: '', space: false, asWritten };
  walk(body[SHAPE], into);
  into.pieces.push(into.piece);
  const { pieces, placeholders } = into;
  if (!asWritten) {
    pieces[0] = (pieces[0] as string).trimStart();
    pieces[pieces.length - 1] = (pieces.at(-1) as string).trimEnd();
  }
  return { pieces, placeholders };
}

/**
 * The output name of a select-list item: its alias, or the column it names (`h.TEAM_NAME`),
 * read from the item's own text (a fragment's, so a name the code or the catalog wrote), once
 * per shape.
 */
export function outputName(item: Fragment): string {
  const shape = item[SHAPE];
  if (shape.outputName !== undefined) return shape.outputName;
  const { pieces, placeholders } = compile(item);
  const name = placeholders.length === 0 ? /(\w+)$/.exec(pieces[0] as string)?.[1] : undefined;
  if (name === undefined)
    throw new Error(`select item without an output name: ${pieces.join('?')}`);
  shape.outputName = name;
  return name;
}

/** The output names of select-list items, as the items of a query over them. */
export function outputsOf(items: readonly Fragment[]): Fragment[] {
  return items.map((item) => text(outputName(item)));
}
