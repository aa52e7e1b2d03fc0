import type { Duplex } from 'node:stream';
import type { ExecutionResult } from 'graphql';
import { WebSocket } from 'ws';
import { FAN_OUT_BATCH, nextTurn } from '../live/hub.js';
import type { EventSource } from '../subscription-events.js';

/** One graphql-ws subscription, as its `next` messages are written. */
export interface SocketSubscription {
  readonly socket: WebSocket;
  /** graphql-ws's per-socket state: a completed subscription's id is no longer in it. */
  readonly context: { readonly subscriptions: Record<string, unknown> };
  readonly id: string;
  /** Its live channel and events' one path, when its events come from src/live. */
  readonly source: EventSource | undefined;
  /** `{"id":…,"type":"next","payload":`, the part of each message that is this subscription's. */
  readonly prefix: Buffer;
}

export function socketSubscription(fields: Omit<SocketSubscription, 'prefix'>): SocketSubscription {
  const prefix = Buffer.from(`{"id":${JSON.stringify(fields.id)},"type":"next","payload":`);
  return { ...fields, prefix };
}

const payloads = new WeakMap<ExecutionResult, Buffer>();

/**
 * A result's JSON, serialized and encoded once however many subscriptions it goes to:
 * identical subscriptions (src/subscription-events.ts) and identical live queries
 * (src/live-queries/index.ts) get the same result object for an event.
 */
function payloadOf(result: ExecutionResult): Buffer {
  let payload = payloads.get(result);
  if (!payload) {
    payload = Buffer.from(JSON.stringify(result));
    payloads.set(result, payload);
  }
  return payload;
}

/**
 * graphql-ws's own `next` message (same id, type and payload as it would send) as one
 * WebSocket text message in three fragments: this subscription's prefix, the shared payload
 * itself and the closing brace. Nothing is copied or serialized per socket (a message built
 * whole would copy the payload into a buffer of its own for each of a thousand sockets:
 * measured, that copy and its garbage cost as much as the write), and the three frames leave
 * in one write: `ws` has no call that sends a message from several buffers, so its socket is
 * corked around them (`_socket`, the net.Socket under every `ws` WebSocket; without it, the
 * frames are written one by one, which is only slower). The client's WebSocket reassembles
 * the fragments into the one message. Nothing is written to a socket that is closing or a
 * subscription the client completed: graphql-ws is ending those, with no more messages.
 */
export function sendNext(subscription: SocketSubscription, result: ExecutionResult): void {
  const { socket } = subscription;
  if (
    socket.readyState !== WebSocket.OPEN ||
    !(subscription.id in subscription.context.subscriptions)
  )
    return;
  const payload = payloadOf(result);
  const stream = (socket as unknown as { _socket?: Duplex })._socket;
  stream?.cork();
  try {
    socket.send(subscription.prefix, { binary: false, fin: false });
    socket.send(payload, { binary: false, fin: false });
    socket.send(CLOSING_BRACE, { binary: false, fin: true });
  } finally {
    stream?.uncork();
  }
}

const CLOSING_BRACE = Buffer.from('}');

/** A subscription whose live channel's events deliverPastChain can write past the iterator chain. */
export type BypassedSubscription = SocketSubscription & { readonly source: EventSource };

export const bypassable = (
  subscription: SocketSubscription,
): subscription is BypassedSubscription => subscription.source !== undefined;

/** One event's finished result, and the subscriptions that wait for it to be written. */
interface Delivery {
  result: ExecutionResult | undefined;
  waiting: BypassedSubscription[];
  readonly written: Promise<void>;
}

const deliveries = new WeakMap<object, Delivery>();

/**
 * Writes an event to a subscription without its chain of async iterators (the channel, the
 * per-subscription plugin wrappers, graphql-ws's loop: several promise hops per subscriber
 * and event): the subscriptions that share a result wait for it together and are then
 * written to in one loop, 500 sockets per turn of the event loop. graphql-ws and envelop have
 * no hook for this (each subscription is its own iterator there), hence a channel bypass.
 *
 * What it writes is the event as src/subscription-events.ts finished it for the whole group
 * (executed, bounded, masked, counted and logged): the same result the chain would yield, so
 * nothing a plugin does to events is restated here. The per-subscription plugins of the chain
 * act on its lifetime (expiry, subscription caps), which this leaves to the chain: it only
 * takes an event while the chain waits for one.
 */
export function deliverPastChain(
  subscription: BypassedSubscription,
  event: unknown,
): Promise<void> | undefined {
  const result = subscription.source.result(event);
  let delivery = deliveries.get(result);
  if (!delivery) {
    delivery = startDelivery(result);
    deliveries.set(result, delivery);
  }
  if (delivery.result === undefined) {
    delivery.waiting.push(subscription);
    return delivery.written;
  }
  write(subscription, delivery.result);
  return undefined;
}

function startDelivery(result: Promise<ExecutionResult> | ExecutionResult): Delivery {
  const delivery: Delivery = {
    result: undefined,
    waiting: [],
    written: Promise.resolve(result).then(async (value) => {
      delivery.result = value;
      const waiting = delivery.waiting;
      delivery.waiting = [];
      for (let i = 0; i < waiting.length; i++) {
        if (i > 0 && i % FAN_OUT_BATCH === 0) await nextTurn();
        write(waiting[i] as BypassedSubscription, value);
      }
    }),
  };
  return delivery;
}

function write(subscription: BypassedSubscription, result: ExecutionResult): void {
  try {
    sendNext(subscription, result);
  } finally {
    subscription.source.channel.settle();
  }
}
