import { randomUUID } from 'node:crypto';

const requestIds = new WeakMap<Request, string>();

/** The caller's X-Request-Id when it is sane, else a new one; stable for the request. */
export function requestIdOf(request: Request): string {
  let id = requestIds.get(request);
  if (!id) {
    const header = request.headers.get('x-request-id');
    id = header && /^[\w.-]{1,128}$/.test(header) ? header : randomUUID();
    requestIds.set(request, id);
  }
  return id;
}
