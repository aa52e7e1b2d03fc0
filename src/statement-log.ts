import type { ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Context, OperationUsage } from './context.js';
import type { SentStatement, StatementSettled } from './db/driver.js';

/**
 * One statement of an operation as its response shows it. The binds are named, never given:
 * a value may be a secret or another owner's data, and the log goes to a browser.
 */
export interface LoggedStatement {
  readonly name: string;
  /** The text as sent, binds written `:name`; null for the driver's own calls (ping). */
  readonly text: string | null;
  readonly binds: Readonly<Record<string, 'REDACTED'>>;
  /** From sending to the last row (or the error), in ms; null while it runs. */
  ms: number | null;
  /** Rows returned; null for a PL/SQL call or while it runs. */
  rows: number | null;
  error?: true;
}

const REDACTED = 'REDACTED' as const;

/**
 * Notes `sent` in `log` as it is sent (so the list keeps sending order) and returns the
 * callback that fills its time and rows when it settles: the counting driver's
 * StatementSettled (src/db/driver.ts).
 */
export function logStatement(log: LoggedStatement[], sent: SentStatement): StatementSettled {
  const entry: LoggedStatement = {
    name: sent.name,
    text: sent.text,
    binds: Object.fromEntries(sent.bindNames.map((name) => [name, REDACTED])),
    ms: null,
    rows: null,
  };
  log.push(entry);
  const start = performance.now();
  return (rows, failed) => {
    entry.ms = Math.round((performance.now() - start) * 100) / 100;
    entry.rows = rows;
    if (failed) entry.error = true;
  };
}

/** `result` with the statements of `usage` in its `extensions.statements`, when it logs them. */
export function withStatements<T extends ExecutionResult>(result: T, usage: OperationUsage): T {
  if (!usage.log) return result;
  return { ...result, extensions: { ...result.extensions, statements: [...usage.log] } };
}

/**
 * The developer's view of what an operation cost the database, as PostGraphile's Ruru shows
 * its SQL: in development mode (NODE_ENV=development; never in production) an
 * administrator's response carries the operation's statements (name, text, time, rows; binds
 * redacted) in `extensions.statements`, and GraphiQL lists them beside the result
 * (src/graphiql.ts). An envelop plugin, so HTTP, SSE and graphql-ws (which executes through
 * yoga's envelop, src/transport/websocket.ts) answer alike. It marks the operation's usage as
 * logged; the counting driver that every repository of the operation goes through fills the
 * log (src/server.ts). A subscription's events each carry their own event's statements
 * (src/subscription-events.ts); a live query's answers carry none: their timings would make
 * every answer differ, and an unchanged answer is not sent (src/live-queries/).
 */
export function useStatementLog(enabled: boolean): Plugin<Context> {
  if (!enabled) return {};
  const mark = (context: Context) => {
    if (context.viewer.admin && !context.usage.log) context.usage.log = [];
  };
  return {
    onSubscribe({ args }) {
      mark(args.contextValue);
    },
    onExecute({ args }) {
      const context = args.contextValue;
      mark(context);
      return {
        onExecuteDone({ result, setResult }) {
          if (isAsyncIterable(result)) return;
          setResult(withStatements(result, context.usage));
        },
      };
    },
  };
}
