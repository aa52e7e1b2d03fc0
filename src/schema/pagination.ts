import { builder } from '../builder.js';
import { badUserInput } from '../errors.js';

export type SchemaTypesOf =
  typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/**
 * Options of a root field that reads a list (or a summary of one): nullable, so that its
 * failure (a view not granted, the A2A server unreachable) is null with its error while the
 * operation's other root fields still answer.
 */
export const rootList = { nullable: true } as const;

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
  readonly edges: { cursor: string; node: T }[];
  readonly pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

function toConnection<T>(window: PageWindow, page: Page<T>): ConnectionResult<T> {
  const items = page.items.slice(0, window.size);
  const edges = items.map((node, i) => ({ cursor: offsetToCursor(window.offset + i), node }));
  return {
    totalCount: page.totalCount,
    edges,
    pageInfo: {
      hasNextPage:
        page.items.length > window.size || window.offset + items.length < page.totalCount,
      hasPreviousPage: window.offset > 0,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
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

builder.globalConnectionField('totalCount', (t) =>
  t.int({
    description: 'Items matching the filter, on every page.',
    resolve: (connection) => connection.totalCount,
  }),
);
