import { type ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { onSingleResults } from './result-hooks.js';

/**
 * The result itself when it serialises to at most `maxBytes`, else a BAD_USER_INPUT error in
 * its place. The cost limit bounds what a document may ask for; this bounds what it gets,
 * whatever the data (long descriptions, many tools), so one request cannot hold hundreds of
 * megabytes and block the event loop while they are written.
 */
export function boundedResult(result: ExecutionResult, maxBytes: number): ExecutionResult {
  // A result is measured once, however often it is asked about.
  let bounded = checked.get(result);
  if (!bounded) {
    bounded = measured(result, maxBytes);
    checked.set(result, bounded);
  }
  return bounded;
}

const checked = new WeakMap<ExecutionResult, ExecutionResult>();

function measured(result: ExecutionResult, maxBytes: number): ExecutionResult {
  let bytes: number;
  try {
    bytes = Buffer.byteLength(JSON.stringify(result));
  } catch {
    // Past V8's string length limit.
    bytes = Number.POSITIVE_INFINITY;
  }
  if (bytes <= maxBytes) return result;
  const size = Number.isFinite(bytes) ? `${bytes} bytes` : 'too large to serialise';
  return {
    data: null,
    errors: [
      new GraphQLError(
        `The response (${size}) exceeds MAX_RESPONSE_BYTES (${maxBytes}); ask for fewer items or fields`,
        { extensions: { code: 'BAD_USER_INPUT' } },
      ),
    ],
  };
}

/**
 * boundedResult on every single result, where execution ends: HTTP and graphql-ws queries
 * (which run yoga's enveloped execute) alike. Subscription events are bounded on their one
 * path, src/subscription-events.ts.
 */
export function responseSizeLimit(maxBytes: number): Plugin<Context> {
  return onSingleResults((result) => boundedResult(result, maxBytes));
}
