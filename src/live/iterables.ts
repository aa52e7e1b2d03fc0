/**
 * Maps each value of an async iterable, passing `return()` through so that a consumer that
 * stops (a client that disconnects) also stops the source.
 */
export function mapAsyncIterable<T, R>(
  source: AsyncIterable<T>,
  map: (value: T) => R | Promise<R>,
): AsyncGenerator<R, void, void> {
  const iterator = source[Symbol.asyncIterator]();
  const stop = async (): Promise<IteratorResult<R, void>> => {
    await iterator.return?.();
    return { done: true, value: undefined };
  };
  return {
    async next() {
      const step = await iterator.next();
      return step.done
        ? { done: true, value: undefined }
        : { done: false, value: await map(step.value) };
    },
    return: stop,
    async throw(error?: unknown) {
      await stop();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
    async [Symbol.asyncDispose]() {
      await stop();
    },
  };
}
