import type { ExecutionResult } from 'graphql';
import type { LimitsConfig } from '../config.js';
import type { Context } from '../context.js';
import { viewerKey } from '../model/viewer.js';
import { limitExceeded } from './limit-error.js';

/**
 * Caps open subscriptions per graphql-ws socket and per viewer (over every socket and SSE
 * stream of this process). Each open subscription costs one execution per event, so without
 * a cap one client could make every poll cycle arbitrarily expensive. Opening one answers
 * the refusal, or the release of its place, for when its stream ends, fails or is returned by
 * its consumer (or it answers at once, without a stream).
 */
export function subscriptionCaps(
  limits: LimitsConfig,
): (context: Context) => ExecutionResult | (() => void) {
  const bySocket = new WeakMap<object, number>();
  const byViewer = new Map<string, number>();
  return (context) => {
    const { socket } = context;
    const viewer = viewerKey(context.viewer);
    const onSocket = socket ? (bySocket.get(socket) ?? 0) : 0;
    const ofViewer = byViewer.get(viewer) ?? 0;
    if (socket && onSocket >= limits.maxSubscriptionsPerSocket) {
      return {
        errors: [
          limitExceeded(
            `Too many subscriptions on this connection: at most ${limits.maxSubscriptionsPerSocket} (MAX_SUBSCRIPTIONS_PER_SOCKET); complete one first`,
          ),
        ],
      };
    }
    if (ofViewer >= limits.maxSubscriptionsPerViewer) {
      return {
        errors: [
          limitExceeded(
            `Too many subscriptions for this identity: at most ${limits.maxSubscriptionsPerViewer} (MAX_SUBSCRIPTIONS_PER_VIEWER); complete one first`,
          ),
        ],
      };
    }
    if (socket) bySocket.set(socket, onSocket + 1);
    byViewer.set(viewer, ofViewer + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (socket) bySocket.set(socket, (bySocket.get(socket) ?? 1) - 1);
      const left = (byViewer.get(viewer) ?? 1) - 1;
      if (left > 0) byViewer.set(viewer, left);
      else byViewer.delete(viewer);
    };
  };
}
