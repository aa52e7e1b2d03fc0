/**
 * A push-fed async iterator for one subscription. Unlike an async generator, `return()`
 * takes effect at once even while the consumer waits in `next()`, which is what a client
 * disconnect needs to release everything the subscription holds.
 */
export class Channel<T> implements AsyncIterableIterator<T> {
  private readonly queue: T[] = [];
  private readonly pulls: ((result: IteratorResult<T>) => void)[] = [];
  private closed = false;

  constructor(private readonly onClose: () => void) {}

  push(value: T): void {
    if (this.closed) return;
    const pull = this.pulls.shift();
    if (pull) pull({ value, done: false });
    else this.queue.push(value);
  }

  /** Like push, but an undelivered earlier value is superseded: only the latest matters. */
  replace(value: T): void {
    if (this.closed) return;
    this.queue.length = 0;
    this.push(value);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    for (const pull of this.pulls.splice(0)) pull({ value: undefined, done: true });
    this.onClose();
  }

  next(): Promise<IteratorResult<T>> {
    if (this.queue.length > 0) {
      return Promise.resolve({ value: this.queue.shift() as T, done: false });
    }
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => this.pulls.push(resolve));
  }

  return(): Promise<IteratorResult<T>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<T>> {
    this.close();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
