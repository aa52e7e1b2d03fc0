import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Config } from './config.js';
import { StartupError } from './errors.js';

/**
 * The port, taken before anything slow (src/main.ts): a busy port is refused, and the first
 * log line printed, in the time it takes to load the configuration, rather than after the
 * modules and the database have loaded. Until the server is ready, `/health` says it is
 * starting, `/ready` is 503, and every other request waits and is then answered by the server
 * (so a client started with it, a `curl` in a script, gets its answer instead of a refusal).
 */
export interface EarlyListener {
  readonly server: Server;
  /** http://host:port, the port chosen when PORT=0. */
  readonly url: string;
  /** Hands every request held so far, and every later one, to `handler`. */
  serve(handler: (req: IncomingMessage, res: ServerResponse) => void): void;
  /** Stops listening, answering the held requests 503 (a start that failed). */
  close(): Promise<void>;
}

const STARTING = '{"status":"starting"}';

export function listenEarly(config: Pick<Config, 'host' | 'port'>): Promise<EarlyListener> {
  const held: [IncomingMessage, ServerResponse][] = [];
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server = createHttpServer((req, res) => {
    if (handler) return handler(req, res);
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && (path === '/health' || path === '/ready')) {
      res.writeHead(path === '/health' ? 200 : 503, {
        'content-type': 'application/json',
        'cache-control': 'no-store',
        'retry-after': '1',
      });
      return void res.end(STARTING);
    }
    held.push([req, res]);
    res.on('close', () => {
      const at = held.findIndex(([waiting]) => waiting === req);
      if (at >= 0) held.splice(at, 1);
    });
  });
  // A WebSocket that arrives before the server is ready is told to come back, not kept.
  const refuseUpgrade = (_req: IncomingMessage, socket: Duplex) => {
    socket.end('HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\ncontent-length: 0\r\n\r\n');
  };
  server.on('upgrade', refuseUpgrade);
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, config)));
    server.listen(config.port, config.host, () => {
      const { port } = server.address() as AddressInfo;
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      resolve({
        server,
        url: `http://${host}:${port}`,
        serve(next) {
          handler = next;
          server.off('upgrade', refuseUpgrade);
          for (const [req, res] of held.splice(0)) {
            if (!res.destroyed) server.emit('request', req, res);
          }
        },
        close: () =>
          new Promise((closed) => {
            for (const [, res] of held.splice(0)) {
              res.writeHead(503, { 'content-type': 'application/json', connection: 'close' });
              res.end('{"status":"could not start"}');
            }
            server.close(() => closed());
            server.closeIdleConnections();
          }),
      });
    });
  });
}

/** The usual reasons a start cannot listen, as one line for the operator. */
export function listenError(
  error: NodeJS.ErrnoException,
  config: Pick<Config, 'host' | 'port'>,
): Error {
  const where = `${config.host}:${config.port}`;
  const message = {
    EADDRINUSE: `${where} is already in use (another agent-graph?): stop what listens there, or set PORT to another port`,
    EACCES: `no permission to listen on ${where}: set PORT to a port above 1023`,
    EADDRNOTAVAIL: `HOST=${config.host} is not an address of this machine: set HOST to one (127.0.0.1 or 0.0.0.0)`,
  }[error.code ?? ''];
  return message ? new StartupError(message, { cause: error }) : error;
}
