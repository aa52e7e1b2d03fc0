import { type ExecutionResult, GraphQLError } from 'graphql';
import { asyncIteratorOf } from '../iterables.js';
import type { TokenExpiry } from '../model/viewer.js';

export const expiredError = () =>
  new GraphQLError('The token has expired; subscribe again with a new one', {
    extensions: { code: 'UNAUTHENTICATED' },
  });

/**
 * A subscription's stream (or a live query's, src/live-queries/, a stream from execute) that
 * lives no longer than the token it was opened with: at `exp` it sends one UNAUTHENTICATED
 * error and ends (an SSE response then completes; a WebSocket is also closed, see
 * transport/websocket.ts). Without this, events kept flowing after expiry.
 */
export function endAt(
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
