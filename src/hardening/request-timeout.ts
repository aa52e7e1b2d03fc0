import { RequestCache } from '@pothos/plugin-scope-auth';
import { type ExecutionArgs, type ExecutionResult, GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import type { Context, OperationStop } from '../context.js';

/**
 * `execute` with the operation's stop set in its context, aborted after `timeoutMs` (the
 * answer is then TIMEOUT) or when the request's signal aborts: the one way cancellation
 * reaches resolvers, on every path (src/compiled-queries.ts). A query or mutation that runs
 * longer than `timeoutMs` (hardening/index.ts wraps every execute in this) is answered
 * TIMEOUT, and no further database round trips start: the operation's stop
 * (`context.usage.stopped`, src/context.ts) aborts, its statements stop, and a long call that
 * listens to its signal (executeAgent: CallOptions in src/db/driver.ts) is interrupted. A
 * statement already sent finishes on its own (its result is discarded). The same stop aborts
 * when the client goes away (the request's own signal, over HTTP and WebSocket alike).
 * Subscriptions are long-lived by design and are not subject to it; each execution of one of
 * their events is (src/subscription-events.ts calls withTimeout).
 */
export function withTimeout(
  execute: (args: ExecutionArgs) => ExecutionResult | Promise<ExecutionResult>,
  args: ExecutionArgs,
  timeoutMs: number,
  logger: Logger,
): ExecutionResult | Promise<ExecutionResult> {
  // yoga's useExecutionCancellation would do this for subscriptions too, whose end the
  // transports own (src/transport/), so only queries, mutations and events take it here.
  const upstream =
    (args as { signal?: AbortSignal }).signal ??
    (args.contextValue as { request?: Request } | undefined)?.request?.signal;
  const stop = new Stop(upstream);
  const usage = (args.contextValue as Partial<Context> | undefined)?.usage;
  if (usage) usage.stopped = stop;
  let answer: ((result: ExecutionResult) => void) | undefined;
  const timer = setTimeout(() => {
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
    stop.abort(error);
    answer?.({ data: null, errors: [error] });
  }, timeoutMs);
  const done = () => {
    clearTimeout(timer);
    stop.release();
    // Pothos's scope-auth keeps its checks per context in a WeakMap whose value holds the
    // context, its key: V8's young-generation collections keep such an entry alive, and
    // with it the whole operation (its loaders, repositories, request), into the old
    // generation until a full collection (docs/operations.md, "A request's objects die
    // young"). Nothing checks a scope once the operation is done.
    if (args.contextValue) RequestCache.clearForContext(args.contextValue);
  };
  let execution: ExecutionResult | Promise<ExecutionResult>;
  try {
    execution = execute(args);
  } catch (error) {
    done();
    throw error;
  }
  // An execution that finished at once (no resolver waited) had no time to run out.
  if (typeof (execution as Partial<PromiseLike<unknown>>).then !== 'function') {
    done();
    return execution;
  }
  const running = execution as PromiseLike<ExecutionResult>;
  // One promise for the first of the answer and the timeout, rather than a race of three.
  return new Promise((resolve, reject) => {
    answer = resolve;
    running.then(
      (result) => {
        done();
        resolve(result);
      },
      (error: unknown) => {
        done();
        // The executor rejects with the stop's reason once the client has gone: an answer
        // nobody reads, not a failure for graphql-ws to report on stderr.
        if (upstream?.aborted && error === stop.reason) {
          resolve({ data: null, errors: [error as GraphQLError] });
        } else reject(error);
      },
    );
  });
}

/**
 * The stop of one operation: aborted by its timeout, or when its client goes away (the
 * request's own signal, over HTTP and WebSocket alike), with a contract error as the reason:
 * what fails on it (a statement the stopped operation may not send) is masked as TIMEOUT,
 * never logged as INTERNAL.
 *
 * The client's going away is read when asked (before each statement) rather than listened
 * for, and an AbortSignal is made only for a call that listens to one (executeAgent): a
 * listener on the request's signal, added and removed, and @whatwg-node's controller cost
 * about 4 us of every operation, which sends its statements and none of these calls.
 */
class Stop implements OperationStop {
  #reason: unknown;
  #aborted = false;
  #controller: AbortController | undefined;

  constructor(private readonly upstream: AbortSignal | undefined) {}

  get aborted(): boolean {
    if (!this.#aborted && this.upstream?.aborted) this.handleEvent();
    return this.#aborted;
  }

  get reason(): unknown {
    return this.aborted ? this.#reason : undefined;
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.#reason;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.aborted) this.#controller.abort(this.#reason);
      // `this` as the listener (its handleEvent): no closure per operation.
      else this.upstream?.addEventListener('abort', this, { once: true });
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }

  /** The client went away. */
  handleEvent(): void {
    this.abort(
      new GraphQLError('The operation was cancelled: the client went away', {
        extensions: { code: 'TIMEOUT' },
      }),
    );
  }

  /** The operation is over: nothing listens for its client any more. */
  release(): void {
    if (this.#controller) this.upstream?.removeEventListener('abort', this);
  }
}
