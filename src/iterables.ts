/**
 * Maps each value of an async iterable, passing `return()` through so that a consumer that
 * stops (a client that disconnects) also stops the source. graphql-yoga's mapAsyncIterator
 * does the same with six closures per call, and every subscription holds one of these.
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
  return new SteppedIterator(next, stop);
}

/**
 * A class rather than an object literal: every subscription holds several of these, and
 * methods on the prototype cost nothing per subscription where closures cost each.
 */
class SteppedIterator<T> implements AsyncGenerator<T, void, void> {
  constructor(
    private readonly step: () => Promise<IteratorResult<T, void>>,
    private readonly stop: () => Promise<void>,
  ) {}

  next(): Promise<IteratorResult<T, void>> {
    return this.step();
  }

  async return(): Promise<IteratorResult<T, void>> {
    await this.stop();
    return { done: true, value: undefined };
  }

  async throw(error?: unknown): Promise<IteratorResult<T, void>> {
    await this.stop();
    throw error;
  }

  [Symbol.asyncIterator](): AsyncGenerator<T, void, void> {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}
