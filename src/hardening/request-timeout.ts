import { RequestCache } from '@pothos/plugin-scope-auth';
import { createCustomAbortControllerSignal } from '@whatwg-node/server';
import { type ExecutionArgs, type ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Context } from '../context.js';

/**
 * Answers TIMEOUT when a query or mutation runs longer than `timeoutMs`, and aborts its
 * execution so that no further database round trips start: the operation's signal
 * (`context.usage.stopped`, src/context.ts) aborts, its statements stop, and a long call that
 * listens to it (executeAgent: CallOptions in src/db/driver.ts) is interrupted. A statement
 * already sent finishes on its own (its result is discarded). The same signal aborts when the
 * client goes away (the request's own signal, over HTTP and WebSocket alike). Subscriptions
 * are long-lived by design and are not subject to it; each execution of one of their events
 * is (src/subscription-events.ts calls withTimeout).
 */
export function requestTimeout(timeoutMs: number, logger: Logger): Plugin {
  return {
    onExecute({ executeFn, setExecuteFn }) {
      setExecuteFn((args) => withTimeout(executeFn, args, timeoutMs, logger));
    },
  };
}

/**
 * `execute` with the operation's signal set in its context, aborted after `timeoutMs` (the
 * answer is then TIMEOUT) or when the request's signal aborts: the one way cancellation
 * reaches resolvers, on every path (src/compiled-queries.ts).
 */
export function withTimeout(
  execute: (args: ExecutionArgs) => ExecutionResult | Promise<ExecutionResult>,
  args: ExecutionArgs,
  timeoutMs: number,
  logger: Logger,
): Promise<ExecutionResult> {
  // whatwg-node's controller (the one yoga gives each request): a native AbortController
  // with AbortSignal.any cost a fifth of a `{ __typename }` request's CPU.
  const controller = createCustomAbortControllerSignal();
  const usage = (args.contextValue as Partial<Context> | undefined)?.usage;
  if (usage) usage.stopped = controller.signal;
  // yoga's useExecutionCancellation would do this for subscriptions too, whose end the
  // transports own (src/transport/), so only queries, mutations and events take it here.
  const upstream =
    (args as { signal?: AbortSignal }).signal ??
    (args.contextValue as { request?: Request } | undefined)?.request?.signal;
  // The reason is a contract error: what fails on it (a statement the stopped operation may
  // not send) is masked as TIMEOUT, never logged as INTERNAL.
  const forward = () =>
    controller.abort(
      new GraphQLError('The operation was cancelled: the client went away', {
        extensions: { code: 'TIMEOUT' },
      }),
    );
  upstream?.addEventListener('abort', forward, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<ExecutionResult>((resolve) => {
    timer = setTimeout(() => {
      const error = new GraphQLError(`The operation did not finish within ${timeoutMs} ms`, {
        extensions: { code: 'TIMEOUT' },
      });
      logger.warn(
        {
          requestId: (args.contextValue as { requestId?: string } | undefined)?.requestId,
          operationName: args.operationName,
          timeoutMs,
        },
        'operation timed out',
      );
      controller.abort(error);
      resolve({ data: null, errors: [error] });
    }, timeoutMs);
  });
  const execution = Promise.resolve(execute(args))
    .catch((error: unknown) => {
      // The executor rejects with the abort's reason once the client has gone: an answer
      // nobody reads, not a failure for graphql-ws to report on stderr.
      if (!upstream?.aborted || error !== controller.signal.reason) throw error;
      return { data: null, errors: [error as GraphQLError] } satisfies ExecutionResult;
    })
    .finally(() => {
      clearTimeout(timer);
      upstream?.removeEventListener('abort', forward);
      // Pothos's scope-auth keeps its checks per context in a WeakMap whose value holds the
      // context, its key: V8's young-generation collections keep such an entry alive, and
      // with it the whole operation (its loaders, repositories, request), into the old
      // generation until a full collection (docs/operations.md, "A request's objects die
      // young"). Nothing checks a scope once the operation is done.
      if (args.contextValue) RequestCache.clearForContext(args.contextValue);
    });
  return Promise.race([execution, timedOut]);
}
