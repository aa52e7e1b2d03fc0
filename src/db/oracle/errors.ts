import { redactCredentials } from '../../config.js';
import { AppError, StartupError } from '../../errors.js';
import { grantFor } from '../catalog.js';

/**
 * Every node-oracledb error becomes what agent-graph reports here, and only here. Messages
 * for clients name at most a view and a privilege: no ORA- text, no SQL. Errors that are not
 * recognised are returned unchanged, so the GraphQL layer logs them and answers INTERNAL.
 */

/** Raised (Oracle Net) while connecting or when a connection breaks. */
const CONNECTION_ERRORS = new Set([
  'NJS-500', // connection closed or broken (also ORA-03113, ORA-03114 and kin)
  'NJS-501', // connection terminated unexpectedly
  'NJS-503', // connection could not be established
  'NJS-504', // connection through a proxy failed
  'NJS-510', // connect timed out
  'NJS-511', // listener refused the connection
  'NJS-518', // service not registered with the listener
  'NJS-519', // SID not registered with the listener
  'NJS-521', // end-of-file on the communication channel
  'NJS-530', // host not resolvable
]);

/** Socket errors that can surface without an NJS- wrapper. */
const SOCKET_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ETIMEDOUT',
]);

const TIMEOUTS: Record<string, string> = {
  'NJS-040': 'no database connection became free in time; try again later',
  'NJS-076': 'too many requests are waiting for a database connection; try again later',
  'NJS-123': 'the database did not answer in time',
};

/** Refusals of the configured account; while serving they mean the database is unusable. */
const ACCOUNT_ERRORS: Record<string, (user: string) => string> = {
  'ORA-01017': (user) =>
    `invalid Oracle credentials for user ${user} (check ORACLE_USER and ORACLE_PASSWORD)`,
  'ORA-28000': (user) => `the Oracle account ${user} is locked`,
  'ORA-28001': (user) => `the password of Oracle user ${user} has expired`,
};

interface OracleErrorFields {
  readonly code?: unknown;
  readonly errorNum?: unknown;
  readonly offset?: unknown;
  readonly message?: unknown;
  readonly cause?: unknown;
}

/**
 * The line of an error message worth reporting: its PLS- line where it has one (ORA-06550's
 * first line only says "line n, column m:"; the PLS- line names what is missing or wrong),
 * else its first line.
 */
export function reportedLine(message: string): string {
  const lines = message.split('\n');
  return (lines.find((line) => /PLS-\d+/.test(line)) ?? lines[0] ?? '').trim();
}

/** `ORA-00942`, `NJS-503`, `ECONNREFUSED`, … or undefined. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, errorNum } = error as OracleErrorFields;
  if (typeof code === 'string' && code !== '') return code;
  if (typeof errorNum === 'number') return `ORA-${String(errorNum).padStart(5, '0')}`;
  return undefined;
}

const isConnectionFailure = (code: string | undefined) =>
  code !== undefined && (CONNECTION_ERRORS.has(code) || SOCKET_ERRORS.has(code));

/** Maps an error raised while running `sql`; returns unknown errors unchanged. */
export function mapQueryError(error: unknown, sql: string): unknown {
  if (error instanceof AppError) return error;
  const code = errorCode(error);
  if (code === undefined) return error;
  if (code === 'ORA-00942' || code === 'ORA-01031') {
    const view = viewOf(error as OracleErrorFields, sql);
    const message = view
      ? `${view} is missing or not granted to the agent-graph database user (grant ${grantFor(view)})`
      : 'a view that agent-graph reads is missing or not granted to its database user';
    return new AppError('FORBIDDEN', message, { cause: error });
  }
  if (code === 'ORA-00904') {
    // A view that exists without a column a statement reads (a release renamed it): like a
    // missing view, the field is refused, naming the column, never INTERNAL.
    const column = /ORA-00904: "?(?:[\w$#]+"?\.)?"?([\w$#]+)"?: invalid identifier/.exec(
      String((error as OracleErrorFields).message ?? ''),
    )?.[1];
    const views = [...viewsRead(sql)].join(', ');
    return new AppError(
      'FORBIDDEN',
      `${views || 'a view agent-graph reads'} has no column ${column ?? 'that this field reads'} in this database release`,
      { cause: error },
    );
  }
  if (isConnectionFailure(code) || code in ACCOUNT_ERRORS) {
    return new AppError('UPSTREAM_UNAVAILABLE', 'the database is unavailable', { cause: error });
  }
  const timeout = TIMEOUTS[code];
  if (timeout !== undefined) return new AppError('TIMEOUT', timeout, { cause: error });
  return error;
}

/**
 * The view an ORA-00942/ORA-01031 is about. Oracle reports the parse position of the name it
 * could not resolve; 23ai also quotes the name in the message. Failing both, a statement that
 * reads a single view names it.
 */
function viewOf(error: OracleErrorFields, sql: string): string | undefined {
  const read = viewsRead(sql);
  if (typeof error.offset === 'number' && error.offset > 0) {
    // The identifier around the offset, whichever of its characters the offset points at.
    let start = Math.min(error.offset, sql.length);
    while (start > 0 && /[\w$#]/.test(sql[start - 1] as string)) start--;
    const view = /^[A-Za-z][\w$#]*/.exec(sql.slice(start))?.[0].toUpperCase();
    if (view !== undefined && read.has(view)) return view;
  }
  const quoted = /"(?:[^"]+)"\."([^"]+)"/.exec(String(error.message ?? ''))?.[1]?.toUpperCase();
  if (quoted !== undefined && read.has(quoted)) return quoted;
  return read.size === 1 ? [...read][0] : undefined;
}

/** Names after FROM and JOIN, upper-cased (derived tables and functions excluded). */
function viewsRead(sql: string): Set<string> {
  const views = new Set<string>();
  for (const match of sql.matchAll(/\b(?:FROM|JOIN)\s+([A-Za-z][\w$#]*(?:\.[A-Za-z][\w$#]*)?)/gi)) {
    const name = (match[1] as string).split('.').pop() as string;
    if (name.toUpperCase() !== 'DUAL') views.add(name.toUpperCase());
  }
  return views;
}

export interface StartupTarget {
  readonly user: string;
  /** From connectTarget(): no secrets. */
  readonly target: string;
}

/** Why the server cannot start, in one line for the operator (driver codes included). */
export function startupError(error: unknown, { user, target }: StartupTarget): StartupError {
  const original = error instanceof AppError && error.cause !== undefined ? error.cause : error;
  const code = errorCode(original);
  const account = code === undefined ? undefined : ACCOUNT_ERRORS[code];
  if (account) return new StartupError(account(user), { cause: original });
  if (code === 'NJS-040') {
    // The pool bounds the wait for a new connection by its queue timeout too.
    return new StartupError(
      `no answer from Oracle at ${target} within the pool queue timeout (DB_QUEUE_TIMEOUT_MS)`,
      { cause: original },
    );
  }
  const detail = redactCredentials(oneLine(original));
  if (isConnectionFailure(code)) {
    return new StartupError(`cannot connect to Oracle at ${target}: ${detail}`, {
      cause: original,
    });
  }
  return new StartupError(`cannot use Oracle at ${target}: ${detail}`, { cause: original });
}

/** The driver's message on one line: help links and connection ids dropped, causes in brackets. */
function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const [first = '', ...causes] = message
    .split('\n')
    .map((line) => line.replace(/\s*\(CONNECTION_ID=[^)]*\)/g, '').trim())
    .filter((line) => line !== '' && !line.startsWith('Help:'));
  const head = first.replace(/\.$/, '');
  return causes.length === 0 ? head : `${head} (${causes.join('; ')})`;
}
