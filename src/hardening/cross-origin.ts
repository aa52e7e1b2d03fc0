import { createGraphQLError, type Plugin, type YogaServerOptions } from 'graphql-yoga';
import { AppError } from '../errors.js';
import { type MaskError, maskedReply } from '../masking.js';
import { requestIdOf } from '../request-id.js';

/**
 * What a POST whose body a browser may send cross-site without a CORS preflight must carry
 * instead of a JSON content type. Any value will do: a custom header forces the preflight.
 */
export const CSRF_HEADER = 'x-graphql-yoga-csrf';

/** The content types of the POSTs browsers send cross-site without asking first. */
const SIMPLE_CONTENT_TYPES = [
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'text/plain',
];

const simpleContentType = (request: Request): string | undefined => {
  const contentType = request.headers.get('content-type');
  if (contentType === null || contentType.trim() === '') return 'none';
  const essence = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return SIMPLE_CONTENT_TYPES.includes(essence) ? essence : undefined;
};

/**
 * Cross-site request forgery matters here once mutations exist: a page in the browser of a
 * caller on an anonymous loopback server (where every caller is an administrator) could
 * otherwise submit a form that runs one. Authentication is a bearer token, never a cookie,
 * so a forged request carries no credentials of its own.
 *
 * So only the POSTs a browser sends cross-site without a preflight need the header: those
 * with a form, multipart or text body, or none. GET is exempt, because yoga refuses
 * mutations over GET (405) and a cross-site page cannot read a query's answer without CORS;
 * that is what lets GraphiQL subscribe (a GET for an event stream) and urql query (GET by
 * default) with no configuration. Yoga's useCSRFPrevention cannot exempt GET and names
 * neither the header nor the fix, hence this plugin.
 */
export function refuseForgery(request: Request): void {
  if (request.method !== 'POST' || request.headers.has(CSRF_HEADER)) return;
  const contentType = simpleContentType(request);
  if (contentType === undefined) return;
  throw createGraphQLError(
    `A POST with ${contentType === 'none' ? 'no content type' : `content type ${contentType}`} is refused (cross-site request forgery protection): send the body as JSON with the header "Content-Type: application/json" (curl: -H 'content-type: application/json'), or add the header "${CSRF_HEADER}: 1"`,
    { extensions: { code: 'BAD_USER_INPUT', http: { status: 403 } } },
  );
}

/**
 * Yoga's CORS, answering only the configured origins (none when CORS_ORIGINS is unset). With
 * a single configured origin yoga would send that origin to every caller; here an unlisted
 * origin gets no CORS header at all. Credentials stay off: callers authenticate with a
 * bearer token in `Authorization`, never with cookies.
 */
export function corsOptions(origins: readonly string[]): YogaServerOptions<object, object>['cors'] {
  const allowed = new Set(origins);
  return (request) => {
    const origin = request.headers.get('origin');
    if (origin === null || !allowed.has(origin)) return false;
    return { origin: [origin], credentials: false, methods: ['GET', 'POST'], maxAge: 600 };
  };
}

/** The refusal of a page's origin, for a preflight and a WebSocket upgrade alike. */
export const originRefused = (origin: string) =>
  new AppError(
    'FORBIDDEN',
    `Cross-origin requests from ${origin} are not allowed: add it to CORS_ORIGINS on the server (comma-separated origins) to let pages there call this API`,
  );

/**
 * A preflight from an unlisted origin gets a 403 that says what to configure; yoga's own
 * answer is an empty 204 (or, with CORS off, the CSRF refusal), neither of which says what
 * is wrong. With origins configured, every answer varies by Origin, since only a listed one
 * is labelled.
 */
export function unlistedOrigins(
  origins: readonly string[],
  maskError: MaskError,
): NonNullable<Plugin['onResponse']> {
  const allowed = new Set(origins);
  return ({ request, response, setResponse, fetchAPI }) => {
    if (allowed.size > 0) response.headers.append('vary', 'Origin');
    const origin = request.headers.get('origin');
    if (request.method !== 'OPTIONS' || origin === null || allowed.has(origin)) return;
    const { body, ...init } = maskedReply(maskError, originRefused(origin), {
      status: 403,
      requestId: requestIdOf(request),
    });
    setResponse(new fetchAPI.Response(body, init));
  };
}
