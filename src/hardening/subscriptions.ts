import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { LimitsConfig } from '../config.js';
import type { Context } from '../context.js';
import { viewerKey } from '../model/viewer.js';
import { limitExceeded } from './limit-error.js';

/**
 * Caps open subscriptions per graphql-ws socket and per viewer (over every socket and SSE
 * stream of this process). Each open subscription costs one execution per event, so without
 * a cap one client could make every poll cycle arbitrarily expensive.
 */
export function subscriptionCaps(limits: LimitsConfig): Plugin<Context> {
  const bySocket = new WeakMap<object, number>();
  const byViewer = new Map<string, number>();
  return {
    onSubscribe({ args, setResultAndStopExecution }) {
      const { socket } = args.contextValue;
      const viewer = viewerKey(args.contextValue.viewer);
      const onSocket = socket ? (bySocket.get(socket) ?? 0) : 0;
      const ofViewer = byViewer.get(viewer) ?? 0;
      if (socket && onSocket >= limits.maxSubscriptionsPerSocket) {
        setResultAndStopExecution({
          errors: [
            limitExceeded(
              `Too many subscriptions on this connection: at most ${limits.maxSubscriptionsPerSocket} (MAX_SUBSCRIPTIONS_PER_SOCKET); complete one first`,
            ),
          ],
        });
        return;
      }
      if (ofViewer >= limits.maxSubscriptionsPerViewer) {
        setResultAndStopExecution({
          errors: [
            limitExceeded(
              `Too many subscriptions for this identity: at most ${limits.maxSubscriptionsPerViewer} (MAX_SUBSCRIPTIONS_PER_VIEWER); complete one first`,
            ),
          ],
        });
        return;
      }
      if (socket) bySocket.set(socket, onSocket + 1);
      byViewer.set(viewer, ofViewer + 1);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        if (socket) bySocket.set(socket, (bySocket.get(socket) ?? 1) - 1);
        const left = (byViewer.get(viewer) ?? 1) - 1;
        if (left > 0) byViewer.set(viewer, left);
        else byViewer.delete(viewer);
      };
      // envelop's own end and error hooks on the stream (finalAsyncIterator and
      // errorAsyncIterator): it ends, fails or is returned by its consumer.
      return {
        onSubscribeResult({ result }) {
          if (isAsyncIterable(result)) return { onEnd: release };
          release();
          return undefined;
        },
        onSubscribeError: release,
      };
    },
  };
}
