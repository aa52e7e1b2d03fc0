import type { IncomingMessage } from 'node:http';
import { type Config, isLoopback } from '../config.js';
import { AppError } from '../errors.js';
import { type MaskError, maskedReply } from '../masking.js';
import { requestIdOfMessage } from '../request-id.js';
import { originRefused } from './cross-origin.js';

/**
 * Who may reach the server from a browser. Browsers apply CORS to fetch but not to
 * WebSockets, so the upgrade checks `Origin` itself; and in the default anonymous loopback
 * mode (every caller an administrator) a page on a rebound DNS name reaches 127.0.0.1 with
 * its own name in `Host`, which only a Host check catches.
 */
export interface BrowserGuard {
  /** False for a Host that only DNS rebinding would send (anonymous loopback mode only). */
  hostAllowed(host: string | undefined): boolean;
  /** Whether a WebSocket upgrade from this page (or from no page at all) is accepted. */
  originAllowed(origin: string | undefined, host: string | undefined): boolean;
  /**
   * Whether this page may act (run mutations) over its socket: what CORS lets it POST, so
   * no page, a page of this server or one of CORS_ORIGINS.
   */
  mayAct(origin: string | undefined, host: string | undefined): boolean;
}

export function browserGuard(config: Config): BrowserGuard {
  // With a token required, a rebound page has nothing to send; with ALLOW_ANONYMOUS on a
  // network address, anyone on that network can already call the server directly.
  const checkHost = config.auth.jwt === null && isLoopback(config.host);
  const origins = new Set(config.http.corsOrigins);
  const sameHost = (origin: string, host: string | undefined) =>
    URL.canParse(origin) && new URL(origin).host === host;
  return {
    hostAllowed: (host) => !checkHost || (host !== undefined && isLoopbackHost(host)),
    mayAct: (origin, host) => origin === undefined || origins.has(origin) || sameHost(origin, host),
    originAllowed(origin, host) {
      // Non-browser clients send no Origin; browsers always do on a WebSocket.
      if (origin === undefined) return true;
      if (origins.has(origin)) return true;
      const url = URL.canParse(origin) ? new URL(origin) : undefined;
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return false;
      if (url.host === host) return true;
      return origins.size === 0 && isLoopback(unbracket(url.hostname));
    },
  };
}

/** The last Host header found to be loopback: clients repeat theirs on every request. */
let loopbackHost: string | undefined;

function isLoopbackHost(host: string): boolean {
  if (host === loopbackHost) return true;
  const loopback =
    URL.canParse(`http://${host}`) && isLoopback(unbracket(new URL(`http://${host}`).hostname));
  if (loopback) loopbackHost = host;
  return loopback;
}

const unbracket = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

/** The refusal of a Host that only DNS rebinding would send, over HTTP and WebSocket. */
export const HOST_REFUSED = new AppError(
  'FORBIDDEN',
  'This Host is not served: without authentication only loopback names are (DNS rebinding)',
);

/**
 * The WebSocketServer `verifyClient` for `guard`: 403 before the handshake completes, with
 * the error body every refusal has (maskedReply).
 */
export function verifyUpgrade(guard: BrowserGuard, maskError: MaskError) {
  return (
    info: { origin: string | undefined; req: IncomingMessage },
    callback: (
      allowed: boolean,
      code?: number,
      message?: string,
      headers?: Record<string, string>,
    ) => void,
  ) => {
    const host = info.req.headers.host;
    // `ws` reports a missing Origin header as undefined.
    const origin = info.origin || undefined;
    const refusal = !guard.hostAllowed(host)
      ? HOST_REFUSED
      : origin !== undefined && !guard.originAllowed(origin, host)
        ? originRefused(origin)
        : undefined;
    if (!refusal) return callback(true);
    const { status, headers, body } = maskedReply(maskError, refusal, {
      status: 403,
      requestId: requestIdOfMessage(info.req),
    });
    // ws writes its own Content-Type header, under this spelling.
    const { 'content-type': contentType = 'application/json', ...rest } = headers;
    callback(false, status, body, { ...rest, 'Content-Type': contentType });
  };
}
