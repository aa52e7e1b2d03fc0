import type { ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';

/**
 * A plugin's hook on every result that is one result rather than a stream of events: an
 * execution's (queries and mutations over HTTP and graphql-ws) and a subscribe's that answers
 * at once (a refusal, an error in its variables). `change` returns the result to send instead,
 * or nothing to keep it. Events never come here: they take their one path, where they are
 * bounded and masked once per group (src/subscription-events.ts); envelop's
 * handleStreamOrSingleExecutionResult would also wrap every subscription's stream for them.
 */
export function onSingleResults(
  change: (result: ExecutionResult, context: Context) => ExecutionResult | undefined,
): Pick<Plugin<Context>, 'onExecute' | 'onSubscribe'> {
  const hook = (payload: {
    readonly args: { readonly contextValue: Context };
    readonly result: ExecutionResult | AsyncIterable<ExecutionResult>;
    readonly setResult: (result: ExecutionResult) => void;
  }) => {
    if (isAsyncIterable(payload.result)) return;
    const changed = change(payload.result, payload.args.contextValue);
    if (changed) payload.setResult(changed);
  };
  return {
    onExecute: () => ({ onExecuteDone: hook }),
    onSubscribe: () => ({ onSubscribeResult: hook }),
  };
}
