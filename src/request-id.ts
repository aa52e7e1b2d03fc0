import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const requestIds = new WeakMap<Request, string>();

/** The caller's X-Request-Id when it is sane, else a new one. */
export function requestIdFrom(header: string | null | undefined): string {
  return header && /^[\w.-]{1,128}$/.test(header) ? header : randomUUID();
}

/** The request id of a fetch request (requestIdFrom its header), stable for the request. */
export function requestIdOf(request: Request): string {
  let id = requestIds.get(request);
  if (!id) {
    id = requestIdFrom(request.headers.get('x-request-id'));
    requestIds.set(request, id);
  }
  return id;
}

/** The request id of a request answered before it becomes a fetch request (requestIdFrom). */
export function requestIdOfMessage(req: IncomingMessage): string {
  const header = req.headers['x-request-id'];
  return requestIdFrom(typeof header === 'string' ? header : undefined);
}
