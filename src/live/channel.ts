/**
 * Takes a value in place of the iterator's consumer (see Channel.bypassWith) and calls
 * `settle` once it is done with it. What it returns settles once the value is written, for whoever times
 * the fan-out.
 */
export type Bypass<T> = (value: T) => PromiseLike<unknown> | undefined;

/**
 * A push-fed async iterator for one subscription. Unlike an async generator, `return()`
 * takes effect at once even while the consumer waits in `next()`, which is what a client
 * disconnect needs to release everything the subscription holds.
 */
export class Channel<T> implements AsyncIterableIterator<T> {
  private readonly queue: T[] = [];
  private readonly pulls: ((result: IteratorResult<T>) => void)[] = [];
  private closed = false;
  private bypass: Bypass<T> | null = null;
  /** Whether the bypass holds a value, until it settles; values pushed meanwhile wait. */
  private bypassing = false;

  constructor(private readonly onClose: () => void) {}

  /**
   * Lets `bypass` take the values that the iterator's consumer would get, whenever that
   * consumer is idle (waiting in `next()` with nothing queued and nothing bypassed): with
   * thousands of subscribers, the chain of iterators behind each channel costs more than the
   * write it ends in. A value goes to the bypass or through the iterator, one at a time, so
   * the two never reorder values.
   */
  bypassWith(bypass: Bypass<T>): void {
    if (!this.closed) this.bypass = bypass;
  }

  /** The bypass is done with its value (written, or dropped for a closing socket); values pushed meanwhile follow it. */
  settle(): void {
    if (!this.bypassing) return;
    this.bypassing = false;
    if (this.closed) return;
    if (this.queue.length > 0) this.push(this.queue.shift() as T);
  }

  /** Returns what the bypass returned when it took the value. */
  push(value: T): PromiseLike<unknown> | undefined {
    if (this.closed) return undefined;
    if (this.bypassing) {
      this.queue.push(value);
      return undefined;
    }
    if (this.bypass && this.queue.length === 0 && this.pulls.length > 0) {
      this.bypassing = true;
      return this.bypass(value);
    }
    const pull = this.pulls.shift();
    if (pull) pull({ value, done: false });
    else this.queue.push(value);
    return undefined;
  }

  /** Like push, but an undelivered earlier value is superseded: only the latest matters. */
  replace(value: T): PromiseLike<unknown> | undefined {
    if (this.closed) return undefined;
    this.queue.length = 0;
    return this.push(value);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.bypass = null;
    this.bypassing = false;
    this.queue.length = 0;
    for (const pull of this.pulls.splice(0)) pull({ value: undefined, done: true });
    this.onClose();
  }

  next(): Promise<IteratorResult<T>> {
    if (this.queue.length > 0 && !this.bypassing) {
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
