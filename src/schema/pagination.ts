import type { GraphQLResolveInfo } from 'graphql';
import { builder } from '../builder.js';
import { badUserInput } from '../errors.js';
import type { KeysetWindow, KeyValue, Position, Positioned, SortKey } from '../model/keyset.js';
import { needs } from './needs.js';
import { storableDate } from './scalars.js';
import { selectsAny } from './selection.js';

export type SchemaTypesOf =
  typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/**
 * Options of a root field that reads a list (or a summary of one): nullable, so that its
 * failure (a view not granted, the A2A server unreachable) is null with its error while the
 * operation's other root fields still answer.
 */
export const rootList = { nullable: true } as const;

/** Filtering by another owner than one's own is for administrators (`filter.owner`). */
export const ownerFilterScope = (
  _root: unknown,
  args: { readonly filter?: { readonly owner?: string | null } | null },
) => (args.filter?.owner ? { admin: true } : true);

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/**
 * The cost of a connection field (@pothos/plugin-complexity): its selection once per item
 * it may return, so that page sizes multiply through nested connections.
 */
export const connectionComplexity = (args: PageArgs) => ({
  field: 1,
  multiplier: args.first ?? args.last ?? DEFAULT_PAGE_SIZE,
});

export interface PageArgs {
  readonly first?: number | null;
  readonly after?: string | null;
  readonly last?: number | null;
  readonly before?: string | null;
}

/** Which slice of an ordered list a connection asks for; `limit` fetches one extra row. */
interface PageWindow {
  readonly offset: number;
  readonly size: number;
  readonly limit: number;
}

const PREFIX = 'offset:';

export function offsetToCursor(offset: number): string {
  return Buffer.from(`${PREFIX}${offset}`).toString('base64url');
}

function cursorToOffset(cursor: string, argument: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const offset = Number(text.slice(PREFIX.length));
  if (!text.startsWith(PREFIX) || !Number.isSafeInteger(offset) || offset < 0) {
    throw badUserInput(`Argument "${argument}" is not a valid cursor: ${JSON.stringify(cursor)}`);
  }
  return offset;
}

function checkSize(value: number | null | undefined, argument: string): void {
  if (value != null && (value < 0 || value > MAX_PAGE_SIZE)) {
    throw badUserInput(
      `Argument "${argument}" must be between 0 and ${MAX_PAGE_SIZE}, got ${value}`,
    );
  }
}

function pageWindow(args: PageArgs): PageWindow {
  checkSize(args.first, 'first');
  checkSize(args.last, 'last');
  let start = args.after ? cursorToOffset(args.after, 'after') + 1 : 0;
  let end = args.before ? cursorToOffset(args.before, 'before') : Number.POSITIVE_INFINITY;
  if (args.first != null) end = Math.min(end, start + args.first);
  if (args.last != null) {
    if (end === Number.POSITIVE_INFINITY) {
      throw badUserInput('Argument "last" needs "before" (or "first") to know where the page ends');
    }
    start = Math.max(start, end - args.last);
  }
  const cap = args.first == null && args.last == null ? DEFAULT_PAGE_SIZE : MAX_PAGE_SIZE;
  const size = Math.max(0, Math.min(end - start, cap));
  return { offset: start, size, limit: size + 1 };
}

export interface ConnectionResult<T> {
  readonly totalCount: number;
  readonly edges: { readonly cursor: string; readonly node: T }[];
  readonly pageInfo: {
    readonly hasNextPage: boolean;
    readonly hasPreviousPage: boolean;
    readonly startCursor: string | null;
    readonly endCursor: string | null;
  };
}

/**
 * An edge whose cursor is written when a field reads it: most operations select a page's
 * nodes and not their cursors, and writing one (JSON, base64) per row was a few per cent of a
 * small page's serving-thread CPU.
 *
 * Classes with their getters on the prototype, not object literals with a getter each: V8
 * gives every literal's own getter (a closure of its own) an accessor of that object, which
 * its young-generation collections keep alive, with the row, the page and all they reach, into
 * the old generation that only a full collection frees (runPage: about 25 kB of every request
 * copied and promoted; docs/operations.md, "Where the CPU of a request goes"). Each keeps what
 * its cursor is written from (here its offset), not a function of its own.
 */
class OffsetEdge<T> {
  constructor(
    readonly node: T,
    private readonly offset: number,
  ) {}

  get cursor(): string {
    return offsetToCursor(this.offset);
  }
}

/** An edge of a keyset page: its cursor is written from its row's place and its order. */
class KeysetEdge<T> {
  readonly node: T;

  constructor(
    private readonly row: Positioned<T>,
    private readonly order: KeysetOrder,
  ) {
    this.node = row.node;
  }

  get cursor(): string {
    return positionToCursor(this.order, this.row.position);
  }
}

/** The page's pageInfo, its first and last cursors written when read, as the edges' are. */
class PageInfo {
  constructor(
    private readonly edges: readonly { readonly cursor: string }[],
    readonly hasNextPage: boolean,
    readonly hasPreviousPage: boolean,
  ) {}

  get startCursor(): string | null {
    return this.edges[0]?.cursor ?? null;
  }

  get endCursor(): string | null {
    return this.edges.at(-1)?.cursor ?? null;
  }
}

function toConnection<T>(window: PageWindow, page: Page<T>): ConnectionResult<T> {
  const items = page.items.slice(0, window.size);
  const edges = items.map((node, i) => new OffsetEdge(node, window.offset + i));
  return {
    totalCount: page.totalCount,
    edges,
    pageInfo: new PageInfo(
      edges,
      page.items.length > window.size || window.offset + items.length < page.totalCount,
      window.offset > 0,
    ),
  };
}

/** A window of rows and the count of all rows that match, as the repositories return it. */
interface Page<T> {
  readonly items: readonly T[];
  readonly totalCount: number;
}

/**
 * The resolver of a connection field: checks the paging arguments, fetches one window
 * (`limit` is one more than the page size, to tell whether a next page exists) and builds
 * the connection. Cursors are offsets, so `last`/`before` page backwards over the same order.
 */
export async function offsetConnection<T>(
  args: PageArgs,
  fetch: (offset: number, limit: number) => Promise<Page<T>>,
): Promise<ConnectionResult<T>> {
  const window = pageWindow(args);
  return toConnection(window, await fetch(window.offset, window.limit));
}

/** Longest text a cursor may carry (bound as VARCHAR2 on Oracle). */
const MAX_CURSOR_TEXT = 512;

/** A keyset order: its name (cursors of another order are refused) and its keys. */
export interface KeysetOrder {
  readonly name: string;
  readonly keys: readonly SortKey[];
}

function positionToCursor(order: KeysetOrder, position: Position): string {
  const values = position.map((value) =>
    value !== null && typeof value === 'object' ? [value.at.toISOString(), value.belowMs] : value,
  );
  return Buffer.from(JSON.stringify([order.name, ...values])).toString('base64url');
}

/** A cursor's decoded values meet the rules the same values meet in an argument. */
const isText = (value: unknown): value is string =>
  typeof value === 'string' && value.length <= MAX_CURSOR_TEXT && !value.includes('\u0000');

function keyValue(key: SortKey, value: unknown, last: boolean): KeyValue | undefined {
  if (value === null) return last ? undefined : null;
  if (!key.date) return isText(value) ? value : undefined;
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [iso, belowMs] = value as unknown[];
  if (typeof iso !== 'string' || typeof belowMs !== 'string' || !/^\d{0,6}$/.test(belowMs)) {
    return undefined;
  }
  const at = new Date(iso);
  if (Number.isNaN(at.getTime()) || !storableDate(at) || at.toISOString() !== iso) return undefined;
  return { at, belowMs };
}

/** The place a keyset cursor names; BAD_USER_INPUT for anything not made by this order. */
function cursorToPosition(order: KeysetOrder, cursor: string, argument: string): Position {
  const invalid = () =>
    badUserInput(
      `Argument "${argument}" is not a cursor of this list in this order: ${JSON.stringify(cursor)}`,
    );
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(decoded) || decoded.length !== order.keys.length + 1) throw invalid();
  const [name, ...values] = decoded as unknown[];
  if (name !== order.name) throw invalid();
  return order.keys.map((key, i) => {
    const value = keyValue(key, values[i], i === order.keys.length - 1);
    if (value === undefined) throw invalid();
    return value;
  });
}

/**
 * The resolver of a connection over a growing list: cursors hold the row's values of the
 * order keys, so rows inserted or removed before a page do not shift it (as offsets would).
 * `first`/`after` read forward; `last` (with or without `before`) reads from the end. With
 * `after`, hasPreviousPage is true (the cursor's row came before); with `before`,
 * hasNextPage is: Relay lets a server answer so when it does not count them. The page is
 * counted only when the operation selects totalCount (the window's `counted`).
 */
export async function keysetConnection<T>(
  args: PageArgs,
  order: KeysetOrder,
  info: GraphQLResolveInfo,
  fetch: (window: KeysetWindow) => Promise<Page<Positioned<T>>>,
): Promise<ConnectionResult<T>> {
  checkSize(args.first, 'first');
  checkSize(args.last, 'last');
  const after = args.after ? cursorToPosition(order, args.after, 'after') : undefined;
  const before = args.before ? cursorToPosition(order, args.before, 'before') : undefined;
  const backward = args.first == null && args.last != null;
  const size = (backward ? args.last : args.first) ?? DEFAULT_PAGE_SIZE;
  const counted = selectsAny(info, TOTAL_COUNT);
  const page = await fetch({ after, before, backward, limit: size + 1, counted });
  const more = page.items.length > size;
  let rows = page.items.slice(0, size);
  if (backward) rows.reverse();
  // first and last together: the last `last` of the first `first`.
  const cut = !backward && args.last != null && rows.length > args.last;
  if (cut) rows = rows.slice(rows.length - (args.last ?? 0));
  const edges = rows.map((row) => new KeysetEdge(row, order));
  return {
    totalCount: page.totalCount,
    edges,
    pageInfo: new PageInfo(
      edges,
      backward ? before !== undefined : more,
      backward ? more : after !== undefined || cut,
    ),
  };
}

/** The connection field a keyset page counts for (keysetConnection). */
const TOTAL_COUNT: ReadonlySet<string> = new Set(['totalCount']);

builder.globalConnectionField('totalCount', (t) =>
  t.exposeInt('totalCount', {
    description: 'Items matching the filter, on every page.',
    ...needs.nothing(),
  }),
);
