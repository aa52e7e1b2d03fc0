import type { IncomingMessage, Server } from 'node:http';
import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLError,
  getOperationAST,
} from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { type GraphQLParams, isAsyncIterable } from 'graphql-yoga';
import type { Logger } from 'pino';
import { type WebSocket, WebSocketServer } from 'ws';
import type { RecordAuthFailure } from '../auth/failures.js';
import type { Authenticate } from '../auth/jwt.js';
import { AppError } from '../errors.js';
import { expiredError } from '../hardening/expiry.js';
import { type BrowserGuard, verifyUpgrade } from '../hardening/origin.js';
import { asyncIteratorOf } from '../iterables.js';
import { copyError, type MaskError } from '../masking.js';
import type { Viewer } from '../model/viewer.js';
import { resolveSocketParams, type SocketServerContext } from '../production/socket-params.js';
import { eventSourceOf } from '../subscription-events.js';
import type { AgentGraphYoga } from '../yoga.js';
import {
  bypassable,
  deliverPastChain,
  type SocketSubscription,
  sendNext,
  socketSubscription,
} from './shared-delivery.js';

/** A client that opens a socket must send connection_init within this time. */
export const CONNECTION_INIT_WAIT_TIMEOUT_MS = 3_000;
/** Ping interval; a client that has not answered the previous ping by then is dropped. */
export const KEEP_ALIVE_MS = 12_000;

/** ExecutionArgs carrying yoga's enveloped execute and subscribe (yoga's graphql-ws example). */
interface EnvelopedArgs extends ExecutionArgs {
  execute(args: ExecutionArgs): Promise<ExecutionResult> | ExecutionResult;
  subscribe(args: ExecutionArgs): Promise<AsyncIterable<ExecutionResult> | ExecutionResult>;
}

export interface GraphqlWsServer {
  /** Closes every client (1001 Going Away), dropping those that do not answer within graceMs. */
  close(graceMs: number): Promise<void>;
}

/**
 * graphql-ws (protocol graphql-transport-ws) on the HTTP server's upgrade requests for
 * /graphql, executed through yoga's envelop so that it shares the schema, the context (one
 * per subscription, one per event), the per-event loaders and yoga's error masking (which
 * runs inside the enveloped execute and subscribe) with HTTP and SSE.
 */
export function attachGraphqlWs(options: {
  readonly server: Server;
  readonly yoga: AgentGraphYoga;
  /** yoga's maskError, for the parse and document-limit errors this transport answers itself. */
  readonly maskError: MaskError;
  readonly logger: Logger;
  readonly authenticate: Authenticate;
  /** Where the yoga context factory finds each request's viewer. */
  readonly viewers: WeakMap<Request, Viewer>;
  readonly recordAuthFailure: RecordAuthFailure;
  readonly guard: BrowserGuard;
  /** MAX_BODY_BYTES: one message may not be larger than one HTTP request body. */
  readonly maxPayload: number;
}): GraphqlWsServer {
  const { yoga, maskError } = options;
  const wss = new WebSocketServer({
    server: options.server,
    path: yoga.graphqlEndpoint,
    maxPayload: options.maxPayload,
    verifyClient: verifyUpgrade(options.guard, maskError),
  });
  const connectionViewers = new WeakMap<object, Viewer>();
  const closeExpired = (socket: WebSocket) => {
    options.recordAuthFailure(
      'websocket',
      new AppError('UNAUTHENTICATED', 'invalid token: expired'),
    );
    socket.close(4401, 'Token expired');
  };
  const disposable = useServer<Record<string, unknown> | undefined>(
    {
      connectionInitWaitTimeout: CONNECTION_INIT_WAIT_TIMEOUT_MS,
      // The token may come in connection_init's payload (browsers cannot set headers on a
      // WebSocket) or on the upgrade request. 4401: no valid token.
      onConnect: async (ctx) => {
        const fromParams =
          ctx.connectionParams?.authorization ?? ctx.connectionParams?.Authorization;
        const authorization =
          typeof fromParams === 'string' ? fromParams : ctx.extra.request.headers.authorization;
        try {
          const viewer = await options.authenticate(authorization);
          connectionViewers.set(ctx.extra.socket, viewer);
          if (viewer.expiry !== undefined) {
            const socket = ctx.extra.socket;
            socket.once(
              'close',
              viewer.expiry.whenPassed(() => closeExpired(socket)),
            );
          }
          return true;
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          options.recordAuthFailure('websocket', error);
          ctx.extra.socket.close(4401, error.message.slice(0, 120));
          return false;
        }
      },
      execute: (args) => (args as EnvelopedArgs).execute(args),
      subscribe: (args) => (args as EnvelopedArgs).subscribe(args),
      onSubscribe: async (ctx, _id, payload) => {
        const request = toFetchRequest(
          ctx.extra.request,
          yoga.graphqlEndpoint,
          socketClosed(ctx.extra.socket),
        );
        const viewer = connectionViewers.get(ctx.extra.socket);
        // The expiry timer closes the socket at `exp`; this covers a message that arrives in
        // the same instant, before the timer has run.
        if (viewer?.expiry?.passed()) {
          closeExpired(ctx.extra.socket);
          return [expiredError()];
        }
        if (viewer) options.viewers.set(request, viewer);
        const serverContext: SocketServerContext = {
          request,
          socket: ctx.extra.socket,
          // graphql-ws allows null where yoga's params leave a member out.
          params: payload as GraphQLParams,
        };
        try {
          // Trusted documents: a hash becomes its document here, as in yoga's HTTP pipeline.
          await resolveSocketParams(yoga, serverContext);
        } catch (error) {
          return [forSocket(maskError(error))];
        }
        const { params } = serverContext;
        const { schema, execute, subscribe, contextFactory, parse, validate } =
          yoga.getEnveloped(serverContext);
        let document: DocumentNode;
        let validationErrors: readonly GraphQLError[];
        try {
          document = parse(params.query ?? '');
          // The document limits (GraphQL Armor) throw from validation rather than report.
          validationErrors = validate(schema, document);
        } catch (error) {
          return [forSocket(maskError(error))];
        }
        if (validationErrors.length > 0) return validationErrors.map(forSocket);
        const refusal = mutationRefusal(
          document,
          payload.operationName,
          ctx.extra.request,
          options.guard,
        );
        if (refusal) return [forSocket(maskError(refusal))];
        const args: EnvelopedArgs = {
          schema,
          document,
          operationName: params.operationName,
          variableValues: params.variables,
          contextValue: await contextFactory(),
          execute,
          subscribe,
        };
        return args;
      },
      onOperation: (ctx, id, _payload, args, result) => {
        if (!isAsyncIterable(result)) return undefined;
        const { socket } = ctx.extra;
        const subscription = socketSubscription({
          socket,
          context: ctx,
          id,
          source: eventSourceOf(args),
        });
        if (bypassable(subscription)) {
          subscription.source.channel.bypassWith((event) => deliverPastChain(subscription, event));
        }
        return sendingShared(result, subscription);
      },
      // Queries, mutations and what subscribe answers at once (a refusal such as a
      // subscription cap): events are written by sendingShared or deliverPastChain.
      onNext: (_ctx, _id, _payload, _args, result) => resultForSocket(result),
    },
    wss,
    KEEP_ALIVE_MS,
  );
  wss.on('error', (error) => options.logger.error({ err: error }, 'WebSocket server error'));
  // graphql-ws reports a socket's errors (a message over maxPayload, a bad frame) with
  // console.error, as raw text outside the JSON log; this replaces its listener, registered
  // in its own connection handler just before this one. `ws` has already closed the socket
  // with the matching code (1009 for a message too big).
  wss.on('connection', (socket) => {
    socket.removeAllListeners('error');
    socket.on('error', (error) => {
      options.logger.warn({ err: { message: error.message } }, 'WebSocket client error');
      socket.terminate();
    });
  });

  return {
    async close(graceMs) {
      const disposed = disposable.dispose();
      const timer = setTimeout(() => {
        for (const client of wss.clients) client.terminate();
      }, graceMs);
      try {
        await disposed;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * Sends graphql-ws's own `next` message for each result of the chain
 * (src/transport/shared-delivery.ts, which serializes a result shared by identical
 * subscriptions once), so that graphql-ws's loop only sees the end. Events written past this
 * chain (deliverPastChain) never reach it.
 */
function sendingShared(
  source: AsyncIterable<ExecutionResult>,
  subscription: SocketSubscription,
): AsyncGenerator<ExecutionResult, void, void> {
  const iterator = source[Symbol.asyncIterator]();
  return asyncIteratorOf(
    async () => {
      for (;;) {
        const step = await iterator.next();
        if (step.done) return step;
        sendNext(subscription, step.value);
      }
    },
    async () => {
      await iterator.return?.();
    },
  );
}

/**
 * `extensions.http` is yoga's note to its HTTP response (a status code, the response cache's
 * ETag); yoga drops it when it writes an HTTP body, and nothing does on a socket.
 */
function resultForSocket(result: ExecutionResult): ExecutionResult {
  let sent = result;
  if (sent.extensions?.http) {
    const { http: _http, ...extensions } = sent.extensions;
    sent = { ...sent, extensions: Object.keys(extensions).length > 0 ? extensions : undefined };
  }
  return sent.errors ? { ...sent, errors: sent.errors.map(forSocket) } : sent;
}

function forSocket(error: GraphQLError): GraphQLError {
  if (!error.extensions.http) return error;
  const { http: _http, ...extensions } = error.extensions;
  return copyError(error, { extensions });
}

const closedSignals = new WeakMap<WebSocket, AbortSignal>();

/**
 * Aborts when the socket closes: the request signal of every operation on it, as an HTTP
 * request's aborts when its client goes away, so that a mutation still running then
 * (executeAgent) is cancelled alike (hardening/request-timeout.ts forwards it).
 */
function socketClosed(socket: WebSocket): AbortSignal {
  let signal = closedSignals.get(socket);
  if (!signal) {
    const controller = new AbortController();
    socket.once('close', () => controller.abort());
    signal = controller.signal;
    closedSignals.set(socket, signal);
  }
  return signal;
}

/**
 * Mutations run over the socket with the limits and budgets of HTTP (yoga's execute), from
 * a client that could POST them too: no browser page (no Origin), a page of this server, or
 * one of CORS_ORIGINS. A page that may only open the socket (another loopback origin, with
 * CORS_ORIGINS unset) may subscribe and query, as it may GET.
 */
function mutationRefusal(
  document: DocumentNode,
  operationName: string | null | undefined,
  upgrade: IncomingMessage,
  guard: BrowserGuard,
): AppError | undefined {
  if (getOperationAST(document, operationName)?.operation !== 'mutation') return undefined;
  const origin = upgrade.headers.origin || undefined;
  if (guard.mayAct(origin, upgrade.headers.host)) return undefined;
  return new AppError(
    'FORBIDDEN',
    `A mutation over WebSocket from a page at ${origin} is refused, as a POST from it would be: add that origin to CORS_ORIGINS on the server, or send the mutation from a page of this server`,
  );
}

/**
 * The upgrade request as a Fetch Request, which is what the yoga context factory reads. Its
 * method is POST: yoga refuses mutations in GET requests, and a socket message is no GET
 * (no link or image can send one; mutationRefusal applies POST's origin rule).
 */
function toFetchRequest(request: IncomingMessage, path: string, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  // The Host header is the client's to choose; a malformed one must not fail the subscription.
  const host = URL.canParse(`http://${request.headers.host}`) ? request.headers.host : 'localhost';
  return new Request(`http://${host}${path}`, { method: 'POST', headers, signal });
}
