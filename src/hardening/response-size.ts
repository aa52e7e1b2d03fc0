import { type ExecutionResult, GraphQLError } from 'graphql';

/**
 * The result itself when it serialises to at most `maxBytes`, else a BAD_USER_INPUT error in
 * its place. The cost limit bounds what a document may ask for; this bounds what it gets,
 * whatever the data (long descriptions, many tools), so one request cannot hold hundreds of
 * megabytes and block the event loop while they are written.
 */
export function boundedResult(result: ExecutionResult, maxBytes: number): ExecutionResult {
  // A result is measured once, however often it is asked about.
  const known = (result as Measured)[BOUNDED];
  if (known) return known;
  const bounded = measured(result, maxBytes);
  Object.defineProperty(result, BOUNDED, {
    value: bounded,
    enumerable: false,
    configurable: true,
    writable: true,
  });
  return bounded;
}

/**
 * What boundedResult answered for a result, kept on the result rather than in a WeakMap keyed
 * by it: V8's young-generation collector keeps a WeakMap's values alive, and this value is
 * mostly its own key, so every result, with all its data and text, outlived its request into
 * the old generation, which only a full collection frees (docs/operations.md, "Where the CPU
 * of a request goes").
 */
const BOUNDED = Symbol('boundedResult');
type Measured = ExecutionResult & { [BOUNDED]?: ExecutionResult };

function measured(result: ExecutionResult, maxBytes: number): ExecutionResult {
  let text: string | undefined;
  try {
    text = JSON.stringify(result);
  } catch {
    // Past V8's string length limit.
  }
  // A UTF-16 code unit is at most 3 bytes of UTF-8, so only a text that may be over the limit
  // is measured: counting a 160 kB response's bytes cost 33 us of the serving thread.
  if (text !== undefined && text.length * 3 <= maxBytes) return writtenAs(result, text);
  const bytes = text === undefined ? Number.POSITIVE_INFINITY : Buffer.byteLength(text);
  if (text !== undefined && bytes <= maxBytes) return writtenAs(result, text);
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
 * The result, whose text yoga's HTTP and SSE writers take from its `stringify` (they call
 * `result.stringify ?? JSON.stringify`, as graphql-jit's results are written): the text just
 * measured, so a response is serialised once (a dashboard's 90 kB twice cost 2 ms). Given any
 * other object (yoga's copy without its internal error extensions), or this one with its
 * `data` replaced since (the response cache's later hook swaps in a copy without the fields it
 * added, src/production/response-cache.ts), it serialises what it is given.
 * Not enumerable: JSON and equality see the result as it was.
 */
function writtenAs(result: ExecutionResult, text: string): ExecutionResult {
  const { data } = result;
  const stringify = (value: unknown) =>
    value === result && result.data === data ? text : JSON.stringify(value);
  Object.defineProperty(result, 'stringify', {
    value: stringify,
    enumerable: false,
    configurable: true,
    writable: true,
  });
  return result;
}
