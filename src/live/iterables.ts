/**
 * Maps each value of an async iterable, passing `return()` through so that a consumer that
 * stops (a client that disconnects) also stops the source.
 */
export function mapAsyncIterable<T, R>(
  source: AsyncIterable<T>,
  map: (value: T) => R | Promise<R>,
): AsyncGenerator<R, void, void> {
  const iterator = source[Symbol.asyncIterator]();
  return asyncIteratorOf<R>(
    async () => {
      const step = await iterator.next();
      return step.done
        ? { done: true, value: undefined }
        : { done: false, value: await map(step.value) };
    },
    async () => {
      await iterator.return?.();
    },
  );
}

/**
 * An async generator whose every way of being ended early (`return`, `throw`, disposal) calls
 * `stop`, so that hand-written wrappers only say how they step and how they clean up.
 */
export function asyncIteratorOf<T>(
  next: () => Promise<IteratorResult<T, void>>,
  stop: () => Promise<void>,
): AsyncGenerator<T, void, void> {
  const finish = async (): Promise<IteratorResult<T, void>> => {
    await stop();
    return { done: true, value: undefined };
  };
  return {
    next,
    return: finish,
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
