import type { ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Context, OperationUsage } from './context.js';

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
