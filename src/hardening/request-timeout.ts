import { createCustomAbortControllerSignal } from '@whatwg-node/server';
import { type ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Context } from '../context.js';

/**
 * Answers TIMEOUT when a query or mutation runs longer than `timeoutMs`, and aborts its
 * execution so that no further database round trips start: the operation's statements stop
 * (OperationUsage in src/context.ts), whichever executor runs it, and graphql-tools' executor
 * (mutations) also stops scheduling resolvers. A statement already sent finishes on its own
 * (its result is discarded), unless it is a long call that listens to the signal
 * (executeAgent: CallOptions in src/db/driver.ts). The same signal aborts when the client
 * goes away (the request's own signal, over HTTP and WebSocket alike). Subscriptions are
 * long-lived by design and are not subject to it.
 */
export function requestTimeout(timeoutMs: number, logger: Logger): Plugin {
  return {
    onExecute({ executeFn, setExecuteFn }) {
      setExecuteFn((args) => {
        // whatwg-node's controller (the one yoga gives each request): a native AbortController
        // with AbortSignal.any cost a fifth of a `{ __typename }` request's CPU.
        const controller = createCustomAbortControllerSignal();
        const usage = (args.contextValue as Partial<Context> | undefined)?.usage;
        if (usage) usage.stopped = controller.signal;
        // yoga's useExecutionCancellation would do this for subscriptions too, whose end the
        // transports own (src/transport/), so only queries and mutations take it here.
        const upstream =
          (args as { signal?: AbortSignal }).signal ??
          (args.contextValue as { request?: Request } | undefined)?.request?.signal;
        // The reason is a contract error: what fails on it (a statement the stopped operation
        // may not send, graphql-tools' executor) is masked as TIMEOUT, never logged as INTERNAL.
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
        // graphql-tools' executor (yoga's, for mutations) stops scheduling resolvers once
        // `signal` aborts; graphql-js's ExecutionArgs type does not know the field.
        const execution = Promise.resolve(
          executeFn({ ...args, signal: controller.signal } as typeof args),
        )
          .catch((error: unknown) => {
            // The executor rejects with the abort's reason once the client has gone: an
            // answer nobody reads, not a failure for graphql-ws to report on stderr.
            if (!upstream?.aborted || error !== controller.signal.reason) throw error;
            return { data: null, errors: [error as GraphQLError] } satisfies ExecutionResult;
          })
          .finally(() => {
            clearTimeout(timer);
            upstream?.removeEventListener('abort', forward);
          });
        return Promise.race([execution, timedOut]);
      });
    },
  };
}
