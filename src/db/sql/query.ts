/**
 * Statements as values. Every statement a repository sends is one `Query`: its name, its
 * text, the binds its placeholders name and the decoder of its rows, built together from one
 * fragment (src/db/sql/fragment.ts) so that none can drift from another.
 *
 * - query(name, body, decode) makes the value; fetchRows(driver, query) runs it and decodes.
 *   Its statement keeps the text cut at the binds, so that a driver numbering its binds ($1)
 *   writes its own text from the fragment without reading the SQL (src/db/driver.ts), and
 *   is one that only statement() makes (frozen, and kept in a set: a copy is not one; the
 *   type's mark is in src/db/driver.ts): the drivers run nothing else. blockText(...) is a
 *   PL/SQL block's text, lines kept; blockStatement(name, body) that text as a statement, its
 *   placeholders with it (a Block's Oracle side, src/db/driver.ts); enclosed(statement,
 *   before, after) a statement inside a driver's outer query.
 * - perCatalog(build) builds a module's statements once per catalog.
 *
 * The other shapes of a statement have a file each: IN lists of binds (in-lists.ts), the
 * owner rule (owners.ts), lists returned as one JSON array (json-lists.ts), pages by offset
 * and by keyset (pages.ts). Statements are written once in the SQL that Oracle and
 * PostgreSQL 18 both accept.
 */

import { LRUCache } from 'lru-cache';
import type { Catalog } from '../catalog.js';
import type { Binds, Driver, Row, Statement } from '../driver.js';
import { compile, type Fragment, shapeId } from './fragment.js';

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
      `statement ${JSON.stringify(sent?.name)} was not built by statement() or query() (src/db/sql/query.ts)`,
    );
  }
  return sent;
}

/**
 * The statements made, by name, order and the shape of their fragment (shapeId), the 1,024
 * most recently used (a few kilobytes of text each): a fragment built as an earlier one was,
 * its binds' values aside (another request's), gets that statement, its text already written.
 */
const statements = new LRUCache<string, Statement>({ max: 1024 });

/** A named statement of the fragment: Oracle's text (`:name` binds) and its pieces. */
export function statement(name: string, body: Fragment, orderedBy?: readonly string[]): Statement {
  const key = `${shapeId(body)}\u0000${name}${orderedBy ? `\u0000${orderedBy.join(',')}` : ''}`;
  let written = statements.get(key);
  if (written === undefined) {
    written = write(name, body, orderedBy);
    statements.set(key, written);
  }
  return written;
}

function write(name: string, body: Fragment, orderedBy?: readonly string[]): Statement {
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
export async function fetchRows<T>(driver: Driver, q: Query<T>): Promise<T[]> {
  if (q.noRows) return [];
  const rows = q.agentDetails
    ? await driver.queryWithAgentDetails(q.statement, q.binds)
    : await driver.query(q.statement, q.binds);
  return q.decodeRows(rows);
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
