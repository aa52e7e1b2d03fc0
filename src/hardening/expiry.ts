import { type ExecutionResult, GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { asyncIteratorOf } from '../iterables.js';
import type { TokenExpiry } from '../model/viewer.js';

export const expiredError = () =>
  new GraphQLError('The token has expired; subscribe again with a new one', {
    extensions: { code: 'UNAUTHENTICATED' },
  });

/**
 * A subscription (or a live query) lives no longer than the token it was opened with: at `exp` its stream
 * sends one UNAUTHENTICATED error and ends (an SSE response then completes; a WebSocket is
 * also closed, see transport/websocket.ts). Without this, events kept flowing after expiry.
 */
export function endSubscriptionsAtExpiry(): Plugin<Context> {
  return {
    onSubscribe({ args }) {
      const expiry = args.contextValue.viewer.expiry;
      if (expiry === undefined) return;
      return {
        onSubscribeResult({ result, setResult }) {
          if (isAsyncIterable(result)) setResult(endAt(result, expiry));
        },
      };
    },
    // A live query (src/live-queries/) is a stream from execute: it ends alike.
    onExecute({ args }) {
      const expiry = args.contextValue.viewer.expiry;
      if (expiry === undefined) return;
      return {
        onExecuteDone({ result, setResult }) {
          if (isAsyncIterable(result)) setResult(endAt(result, expiry));
        },
      };
    },
  };
}

function endAt(
  source: AsyncIterable<ExecutionResult>,
  expiry: TokenExpiry,
): AsyncGenerator<ExecutionResult, void, void> {
  const iterator = source[Symbol.asyncIterator]();
  let ended = false;
  let cancel = () => {};
  const expired = new Promise<'expired'>((resolve) => {
    cancel = expiry.whenPassed(() => resolve('expired'));
  });
  const finish = async () => {
    ended = true;
    cancel();
    await iterator.return?.();
  };
  return asyncIteratorOf(async () => {
    if (ended) return { done: true, value: undefined };
    const step = await Promise.race([iterator.next(), expired]);
    if (step === 'expired') {
      await finish();
      return { done: false, value: { errors: [expiredError()] } };
    }
    if (step.done) await finish();
    return step;
  }, finish);
}
