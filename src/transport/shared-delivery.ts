import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { WebSocket } from 'ws';
import { boundedResult } from '../hardening/response-size.js';
import type { Channel } from '../live/hub.js';
import { FAN_OUT_BATCH, nextTurn } from '../live/hub.js';
import { executeShared } from '../per-event-context.js';

/** One graphql-ws subscription, as its `next` messages are written. */
export interface SocketSubscription {
  readonly socket: WebSocket;
  /** graphql-ws's per-socket state: a completed subscription's id is no longer in it. */
  readonly context: { readonly subscriptions: Record<string, unknown> };
  readonly id: string;
  /** When the token it was opened with expires (epoch ms). */
  readonly expiresAt: number | undefined;
  readonly args: ExecutionArgs;
  /** The live channel its events come from, which deliverPastChain bypasses. */
  readonly channel: Channel<unknown> | undefined;
  /** `{"id":…,"type":"next","payload":`, the part of each message that is this subscription's. */
  readonly prefix: string;
  readonly prefixBytes: number;
}

export function socketSubscription(
  fields: Omit<SocketSubscription, 'prefix' | 'prefixBytes'>,
): SocketSubscription {
  const prefix = `{"id":${JSON.stringify(fields.id)},"type":"next","payload":`;
  return { ...fields, prefix, prefixBytes: Buffer.byteLength(prefix) };
}

const payloads = new WeakMap<ExecutionResult, Buffer>();

/**
 * A result's JSON, serialized and encoded once however many subscriptions it goes to:
 * identical subscriptions get the same result object for an event (src/per-event-context.ts).
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
 * graphql-ws's own `next` message (same id, type and payload as it would send), as the bytes
 * of a text frame: one copy of the shared payload, no per-socket serialization or encoding.
 */
export function sendNext(subscription: SocketSubscription, result: ExecutionResult): void {
  const payload = payloadOf(result);
  const frame = Buffer.allocUnsafe(subscription.prefixBytes + payload.length + 1);
  frame.write(subscription.prefix, 0);
  payload.copy(frame, subscription.prefixBytes);
  frame[frame.length - 1] = CLOSING_BRACE;
  subscription.socket.send(frame, { binary: false });
}

const CLOSING_BRACE = 0x7d;

/** A subscription whose live channel's events deliverPastChain can write past the iterator chain. */
export type BypassedSubscription = SocketSubscription & { readonly channel: Channel<unknown> };

export const bypassable = (
  subscription: SocketSubscription,
): subscription is BypassedSubscription => subscription.channel !== undefined;

/** One event's result, and the subscriptions that wait for it to be written. */
interface Delivery {
  /** Known once the result is there: null when it goes through the iterator chain instead. */
  result: ExecutionResult | null | undefined;
  waiting: BypassedSubscription[];
  readonly written: Promise<void>;
}

const deliveries = new WeakMap<object, Delivery>();

/**
 * Writes an event to a subscription without its chain of async iterators (the channel, the
 * per-event execution, the envelop result hooks of the plugins, graphql-ws's loop), several
 * promise hops per subscriber and event: the subscriptions that share a result (the same
 * object for identical subscriptions, see per-event-context.ts) wait for it together and are
 * then written to in one loop. graphql-ws and envelop have no hook for this (each
 * subscription is its own iterator there), hence a channel bypass.
 *
 * It does for an error-free result what the chain's hooks do for it: the MAX_RESPONSE_BYTES
 * check (boundedResult, the same measurement as responseSizeLimit), the expiry of the token
 * (an expired subscription's event goes through the chain, whose endSubscriptionsAtExpiry
 * ends it) and nothing else, as error masking and request ids concern errors only. Results
 * with errors, too large ones and failed executions go through the chain, which sends them
 * as before (masked per socket). A plugin that changes error-free events must be added here.
 */
export function deliverPastChain(
  subscription: BypassedSubscription,
  event: unknown,
  maxResponseBytes: number,
): Promise<void> | undefined {
  const result = executeShared(subscription.args, event);
  let delivery = deliveries.get(result);
  if (!delivery) {
    delivery = startDelivery(result, maxResponseBytes);
    deliveries.set(result, delivery);
  }
  if (delivery.result === undefined) {
    delivery.waiting.push(subscription);
    return delivery.written;
  }
  write(subscription, delivery.result);
  return undefined;
}

function startDelivery(
  result: ExecutionResult | Promise<ExecutionResult>,
  maxResponseBytes: number,
): Delivery {
  const delivery: Delivery = {
    result: undefined,
    waiting: [],
    written: Promise.resolve(result)
      .then(
        (value) =>
          !value.errors && boundedResult(value, maxResponseBytes) === value ? value : null,
        () => null,
      )
      .then(async (value) => {
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

function write(subscription: BypassedSubscription, result: ExecutionResult | null): void {
  let taken = false;
  try {
    taken = written(subscription, result);
  } finally {
    subscription.channel.settle(taken);
  }
}

/** False: the event goes through the iterator chain after all. */
function written(subscription: BypassedSubscription, result: ExecutionResult | null): boolean {
  if (!result) return false;
  // Completed by the client, or closing: graphql-ws is ending it, with no more messages.
  const { socket } = subscription;
  if (
    socket.readyState !== WebSocket.OPEN ||
    !(subscription.id in subscription.context.subscriptions)
  ) {
    return true;
  }
  if (subscription.expiresAt !== undefined && subscription.expiresAt <= Date.now()) return false;
  sendNext(subscription, result);
  return true;
}
