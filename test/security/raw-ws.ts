import WebSocket from 'ws';
import { Wakeup } from '../live/support.js';
import { WAIT_MS } from '../support/wait.js';

export interface RawMessage {
  readonly type: string;
  readonly id?: string;
  readonly payload?: unknown;
}

/**
 * A graphql-transport-ws socket driven by hand, message by message, so that tests can send
 * what a well-behaved client library never would and watch exactly what comes back.
 */
export class RawSocket {
  readonly messages: RawMessage[] = [];
  closed: { code: number; reason: string } | undefined;
  private readonly wakeup = new Wakeup();

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.messages.push(JSON.parse(String(data)) as RawMessage);
      this.wakeup.wake();
    });
    socket.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
      this.wakeup.wake();
    });
    socket.on('error', () => this.wakeup.wake());
  }

  /** Opens the socket (rejecting when the upgrade is refused) without sending anything. */
  static open(url: string, headers: Record<string, string> = {}): Promise<RawSocket> {
    const socket = new WebSocket(url, 'graphql-transport-ws', { headers });
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(new RawSocket(socket)));
      socket.once('unexpected-response', (_request, response) =>
        reject(new Error(`upgrade refused: ${response.statusCode}`)),
      );
      socket.once('error', reject);
    });
  }

  /** Opens the socket and completes connection_init / connection_ack. */
  static async connect(
    url: string,
    payload: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ): Promise<RawSocket> {
    const raw = await RawSocket.open(url, headers);
    raw.send({ type: 'connection_init', payload });
    await raw.next((m) => m.type === 'connection_ack');
    return raw;
  }

  send(message: RawMessage | string): void {
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  subscribe(id: string, query: string, variables?: Record<string, unknown>): void {
    this.send({ type: 'subscribe', id, payload: { query, variables } });
  }

  /** The first message (from now on, or already received) matching `predicate`. */
  async next(
    predicate: (message: RawMessage) => boolean,
    timeoutMs = WAIT_MS,
  ): Promise<RawMessage> {
    await this.until(() => this.messages.some(predicate), timeoutMs, 'a message');
    return this.messages.find(predicate) as RawMessage;
  }

  /** Resolves with the close frame once the socket closes. */
  async close(timeoutMs = WAIT_MS): Promise<{ code: number; reason: string }> {
    await this.until(() => this.closed !== undefined, timeoutMs, 'the socket to close');
    return this.closed as { code: number; reason: string };
  }

  terminate(): void {
    this.socket.terminate();
  }

  private async until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (this.closed && what !== 'the socket to close') {
        throw new Error(`socket closed (${this.closed.code}) while waiting for ${what}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.messages)}`);
      }
      await this.wakeup.next(left);
    }
  }
}
