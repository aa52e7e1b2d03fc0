import { setTimeout as sleep } from 'node:timers/promises';
import { A2A_PROTOCOL_VERSION, A2A_VERSION_HEADER } from '@a2a-js/sdk';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import { type AgentCard, parseAgentCard } from './normalize.js';
import { cardUrl, listUrl } from './paths.js';

/** One entry of the list endpoint (seed 004). */
export interface A2AAgentListing {
  readonly name: string;
  readonly description: string | null;
  readonly agentCardUrl: string;
}

/** What the GraphQL layer needs from an A2A server. */
export interface A2ACards {
  listAgents(): Promise<A2AAgentListing[]>;
  card(teamName: string): Promise<AgentCard>;
}

/**
 * The `outcome` label of agentgraph_a2a_requests_total: one count per HTTP request sent, so
 * the counter's sum is exactly the traffic to the A2A server. Cache hits send nothing and are
 * counted by the cache counter instead. `invalid_body` is a 2xx whose body was unusable.
 * Token endpoint requests count as `token_ok` or `token_error`.
 */
export type A2ARequestOutcome =
  | 'ok'
  | 'not_modified'
  | 'invalid_body'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'client_error'
  | 'server_error'
  | 'timeout'
  | 'network_error'
  | 'token_ok'
  | 'token_error';

/** hit: served from memory; revalidated: a 304 confirmed the entry; miss: a full fetch. */
export type A2ACacheResult = 'hit' | 'revalidated' | 'miss';

export interface A2AClientOptions {
  /** The `…/adb/a2a/v1/databases/{ocid}` prefix. */
  readonly baseUrl: string;
  /** A bearer token to start with (A2A_TOKEN). */
  readonly token?: string | undefined;
  /** To obtain a token, and a fresh one after a 401. */
  readonly credentials?:
    | { readonly username: string; readonly password: string; readonly tokenUrl: string }
    | undefined;
  readonly timeoutMs: number;
  readonly cacheTtlMs: number;
  readonly retries: number;
  /** Bodies past this size are refused unread (A2A_MAX_BODY_BYTES). */
  readonly maxBodyBytes: number;
  /** First retry delay; each later one doubles, plus up to 50 % jitter. */
  readonly retryDelayMs?: number;
  readonly onRequest?: (outcome: A2ARequestOutcome) => void;
  readonly onCache?: (result: A2ACacheResult) => void;
  readonly logger?: Logger;
  /** The clock cache entries expire by (ms); tests move it instead of waiting. */
  readonly now?: () => number;
}

interface CacheEntry {
  readonly value: unknown;
  readonly etag: string | null;
  expiresAt: number;
}

/** Enough for every team of a large database; past it the oldest entry goes. */
const MAX_CACHE_ENTRIES = 2000;

interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

type Kind = 'a2a' | 'token';

interface Exchange<T> {
  readonly kind: Kind;
  readonly method: 'GET' | 'POST';
  readonly url: string;
  /** Names the resource in messages: `agent card of team "X"`. */
  readonly what: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly parse: (body: string) => T;
}

type Answer<T> =
  | { readonly reply: Reply; readonly notModified: true }
  | { readonly reply: Reply; readonly notModified: false; readonly value: T };

/**
 * HTTP client for Autonomous Database's A2A server: the list and card endpoints behind a
 * bearer token, with a timeout per attempt, bounded retries, and an HTTP cache shared by all
 * GraphQL requests (ETag revalidation, Cache-Control max-age / no-cache / no-store, capped
 * by A2A_CACHE_TTL_MS). Identical requests in flight at the same time share one fetch.
 *
 * The token only ever goes into the Authorization header: messages and logs name the
 * resource ("agent card of team X"), never headers, bodies or the token.
 */
export class A2AClient implements A2ACards {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly tokens: BearerTokens;
  private readonly now: () => number;

  constructor(private readonly options: A2AClientOptions) {
    const { credentials } = options;
    this.now = options.now ?? Date.now;
    this.tokens = new BearerTokens(
      options.token,
      credentials && (() => this.fetchToken(credentials)),
    );
  }

  listAgents(): Promise<A2AAgentListing[]> {
    return this.cached(listUrl(this.options.baseUrl), 'agent list', parseListing);
  }

  async card(teamName: string): Promise<AgentCard> {
    const what = `agent card of team "${teamName}"`;
    return this.cached(cardUrl(this.options.baseUrl, teamName), what, (body) =>
      parseAgentCard(body, what),
    );
  }

  private cached<T>(url: string, what: string, parse: (body: string) => T): Promise<T> {
    const entry = this.cache.get(url);
    if (entry && entry.expiresAt > this.now()) {
      this.options.onCache?.('hit');
      return Promise.resolve(entry.value as T);
    }
    let pending = this.inFlight.get(url) as Promise<T> | undefined;
    if (!pending) {
      pending = this.revalidate(url, what, parse, entry).finally(() => this.inFlight.delete(url));
      this.inFlight.set(url, pending);
    }
    return pending;
  }

  private async revalidate<T>(
    url: string,
    what: string,
    parse: (body: string) => T,
    entry: CacheEntry | undefined,
  ): Promise<T> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      [A2A_VERSION_HEADER]: A2A_PROTOCOL_VERSION,
    };
    if (entry?.etag) headers['if-none-match'] = entry.etag;
    const answer = await this.execute({ kind: 'a2a', method: 'GET', url, what, headers, parse });
    const freshFor = freshness(answer.reply.headers, this.options.cacheTtlMs);
    if (answer.notModified) {
      if (!entry) throw new Error('a 304 answers only a request that carried an ETag');
      this.options.onCache?.('revalidated');
      if (freshFor === null) this.cache.delete(url);
      else entry.expiresAt = this.now() + freshFor;
      return entry.value as T;
    }
    this.options.onCache?.('miss');
    const { value } = answer;
    const etag = answer.reply.headers.get('etag');
    this.cache.delete(url);
    if (freshFor !== null && (freshFor > 0 || etag) && this.options.cacheTtlMs > 0) {
      if (this.cache.size >= MAX_CACHE_ENTRIES) {
        const oldest = this.cache.keys().next().value;
        if (oldest !== undefined) this.cache.delete(oldest);
      }
      this.cache.set(url, { value, etag, expiresAt: this.now() + freshFor });
    }
    return value;
  }

  private async fetchToken(credentials: NonNullable<A2AClientOptions['credentials']>) {
    const body = JSON.stringify({
      grant_type: 'password',
      username: credentials.username,
      password: credentials.password,
    });
    const answer = await this.execute({
      kind: 'token',
      method: 'POST',
      url: credentials.tokenUrl,
      what: 'bearer token',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body,
      parse: parseToken,
    });
    if (answer.notModified) throw new Error('a token request is never conditional');
    return answer.value;
  }

  /**
   * One logical request: attempts until a final answer. 5xx and network errors are retried
   * with backoff; a timeout is not (the server is up but slow, and another attempt would
   * only double the wait); a 401 gets one new token.
   */
  private async execute<T>(exchange: Exchange<T>): Promise<Answer<T>> {
    const { kind, method, url, what, headers, body, parse } = exchange;
    const count = (outcome: A2ARequestOutcome) =>
      this.options.onRequest?.(
        kind === 'token' ? (outcome === 'ok' ? 'token_ok' : 'token_error') : outcome,
      );
    let failures = 0;
    let refreshed = false;
    for (;;) {
      const token = kind === 'a2a' ? await this.tokens.current() : undefined;
      const sent = token ? { ...headers, authorization: `Bearer ${token}` } : headers;
      let reply: Reply;
      try {
        reply = await this.send(method, url, sent, body);
      } catch (error) {
        if (error instanceof BodyTooLarge) {
          count('invalid_body');
          this.log(url, `body over ${this.options.maxBodyBytes} bytes`);
          throw new AppError(
            'UPSTREAM_UNAVAILABLE',
            `The A2A server sent more than A2A_MAX_BODY_BYTES (${this.options.maxBodyBytes} bytes) for the ${what}`,
          );
        }
        if (isTimeout(error)) {
          count('timeout');
          throw new AppError(
            'TIMEOUT',
            `The A2A server did not answer within ${this.options.timeoutMs} ms for the ${what}`,
          );
        }
        count('network_error');
        const reason = networkReason(error);
        this.options.logger?.debug({ url, err: error }, 'A2A request could not be sent');
        if (failures < this.options.retries) {
          await this.backoff(failures++, url, reason);
          continue;
        }
        this.log(url, `network error: ${reason}`);
        throw new AppError(
          'UPSTREAM_UNAVAILABLE',
          `The A2A server could not be reached for the ${what} (${reason}; ${failures + 1} attempts)`,
        );
      }
      const status = reply.status;
      if (status === 304 && headers['if-none-match']) {
        count('not_modified');
        return { reply, notModified: true };
      }
      if (status >= 200 && status < 300) {
        try {
          const value = parse(reply.body);
          count('ok');
          return { reply, notModified: false, value };
        } catch (error) {
          count('invalid_body');
          // The message names the card only; what was wrong with the body stays in the log.
          this.options.logger?.warn(
            { url, err: error instanceof AppError ? (error.cause ?? error) : error },
            'A2A answer unusable',
          );
          throw error;
        }
      }
      if (status === 401) {
        count('unauthorized');
        if (kind === 'a2a' && !refreshed && this.tokens.canRefresh) {
          refreshed = true;
          await this.tokens.refresh(token);
          continue;
        }
        throw new AppError('UNAUTHENTICATED', this.unauthorizedMessage(kind, what, refreshed));
      }
      if (status === 403) {
        count('forbidden');
        throw new AppError(
          'UNAUTHENTICATED',
          kind === 'token'
            ? `The A2A token endpoint refused A2A_USERNAME (403)`
            : `The A2A server refused access to the ${what} (403): the database user behind the token may not see it`,
        );
      }
      if (status >= 500) {
        count('server_error');
        if (failures < this.options.retries) {
          await this.backoff(failures++, url, `HTTP ${status}`);
          continue;
        }
        this.log(url, `HTTP ${status}`);
        throw new AppError(
          'UPSTREAM_UNAVAILABLE',
          `The A2A server answered ${status} for the ${what} (${failures + 1} attempts)`,
        );
      }
      if (status === 404) {
        count('not_found');
        throw new AppError(
          kind === 'token' ? 'UPSTREAM_UNAVAILABLE' : 'NOT_FOUND',
          kind === 'token'
            ? 'The A2A token endpoint was not found (404): check A2A_TOKEN_URL or A2A_BASE_URL'
            : `The A2A server has no ${what} (404)`,
        );
      }
      count('client_error');
      if (kind === 'token' && status === 400) {
        throw new AppError('UNAUTHENTICATED', this.unauthorizedMessage(kind, what, false));
      }
      throw new AppError(
        'UPSTREAM_UNAVAILABLE',
        status >= 300 && status < 400
          ? `The A2A server redirected the request for the ${what} (${status}); set A2A_BASE_URL to the final address`
          : `The A2A server answered ${status} for the ${what}`,
      );
    }
  }

  private unauthorizedMessage(kind: Kind, what: string, refreshed: boolean): string {
    if (kind === 'token') return 'The A2A token endpoint rejected A2A_USERNAME/A2A_PASSWORD';
    if (refreshed)
      return `The A2A server rejected a newly issued token for the ${what} (401 twice)`;
    return this.options.token
      ? `The A2A server rejected A2A_TOKEN for the ${what} (401); set A2A_USERNAME/A2A_PASSWORD to have tokens renewed`
      : `The A2A server requires a token for the ${what} (401); set A2A_TOKEN or A2A_USERNAME/A2A_PASSWORD`;
  }

  /** One HTTP exchange, body included, within the timeout. Redirects are not followed,
   * so that the token never travels to another address. */
  private async send(
    method: string,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
  ): Promise<Reply> {
    const response = await fetch(url, {
      method,
      headers,
      body,
      redirect: 'manual',
      // fetch's default mode turns a request with If-None-Match into a reload (Cache-Control:
      // no-cache), which servers answer with a full 200; 'no-cache' asks them to revalidate.
      cache: 'no-cache',
      signal: AbortSignal.timeout(this.options.timeoutMs),
    });
    return {
      status: response.status,
      headers: response.headers,
      body: await readBounded(response, this.options.maxBodyBytes),
    };
  }

  private async backoff(failure: number, url: string, reason: string): Promise<void> {
    const base = (this.options.retryDelayMs ?? 100) * 2 ** failure;
    this.options.logger?.debug({ url, reason, retry: failure + 1 }, 'A2A request retried');
    await sleep(base + Math.random() * base * 0.5);
  }

  private log(url: string, reason: string): void {
    this.options.logger?.warn({ url, reason }, 'A2A request failed');
  }
}

/**
 * The bearer token in use, fetched with the credentials when there is none and renewed when
 * the server rejects it. Concurrent requests share one token fetch.
 */
class BearerTokens {
  private pending: Promise<string> | undefined;

  constructor(
    private token: string | undefined,
    private readonly fetchToken: (() => Promise<string>) | undefined,
  ) {}

  get canRefresh(): boolean {
    return this.fetchToken !== undefined;
  }

  async current(): Promise<string | undefined> {
    if (this.token !== undefined || !this.fetchToken) return this.token;
    this.pending ??= this.fetchToken()
      .then((token) => {
        this.token = token;
        return token;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }

  /** Drops `rejected` unless another request has already replaced it, then gets a new one. */
  async refresh(rejected: string | undefined): Promise<void> {
    if (this.token === rejected) this.token = undefined;
    await this.current();
  }
}

/** When the answer may be reused, in ms (0: revalidate each time); null: do not store it. */
function freshness(headers: Headers, ttlMs: number): number | null {
  const cacheControl = headers.get('cache-control')?.toLowerCase() ?? '';
  if (/(^|[\s,])no-store\b/.test(cacheControl)) return null;
  if (/(^|[\s,])no-cache\b/.test(cacheControl)) return 0;
  const maxAge = /(^|[\s,])max-age\s*=\s*"?(\d+)/.exec(cacheControl);
  if (!maxAge) return ttlMs;
  const age = Number(headers.get('age') ?? 0) || 0;
  return Math.min(ttlMs, Math.max(0, Number(maxAge[2]) - age) * 1000);
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

/**
 * The low-level reason (ECONNREFUSED, …): fetch itself only says "fetch failed". Only an
 * error code goes into the client's message: other error text can quote the URL or the
 * upstream's own words (it is logged instead).
 */
function networkReason(error: unknown): string {
  const cause =
    error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  const code = cause?.code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code) ? code : 'network error';
}

class BodyTooLarge extends Error {}

/** The body as text, refused (and the connection dropped) once it passes `limit` bytes. */
async function readBounded(response: Response, limit: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) {
    await response.body?.cancel();
    throw new BodyTooLarge();
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks).toString('utf8');
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLarge();
    }
    chunks.push(value);
  }
}

function parseJson(body: string, what: string): unknown {
  try {
    return JSON.parse(body);
  } catch (error) {
    throw new AppError(
      'UPSTREAM_UNAVAILABLE',
      `The ${what} from the A2A server is not valid JSON`,
      {
        cause: error,
      },
    );
  }
}

function parseListing(body: string): A2AAgentListing[] {
  const raw = parseJson(body, 'agent list');
  if (!Array.isArray(raw)) {
    throw new AppError(
      'UPSTREAM_UNAVAILABLE',
      'The agent list from the A2A server is not a JSON array',
    );
  }
  const problems: string[] = [];
  const listings = raw.flatMap((item: unknown, i): A2AAgentListing[] => {
    const entry = (typeof item === 'object' && item !== null ? item : {}) as Record<
      string,
      unknown
    >;
    const { name, description, agent_card_url: agentCardUrl } = entry;
    if (typeof name !== 'string' || name === '') problems.push(`[${i}].name is missing`);
    if (typeof agentCardUrl !== 'string') problems.push(`[${i}].agent_card_url is missing`);
    if (description != null && typeof description !== 'string')
      problems.push(`[${i}].description must be a string`);
    if (typeof name !== 'string' || typeof agentCardUrl !== 'string') return [];
    return [
      { name, description: typeof description === 'string' ? description : null, agentCardUrl },
    ];
  });
  if (problems.length > 0) {
    throw new AppError(
      'UPSTREAM_UNAVAILABLE',
      `The agent list from the A2A server is invalid: ${problems.join('; ')}`,
    );
  }
  return listings;
}

function parseToken(body: string): string {
  const raw = parseJson(body, 'token response') as { access_token?: unknown } | null;
  const token = raw?.access_token;
  if (typeof token !== 'string' || token === '') {
    throw new AppError(
      'UPSTREAM_UNAVAILABLE',
      'The token response from the A2A token endpoint has no access_token',
    );
  }
  return token;
}

/** With Oracle and no A2A_BASE_URL: the A2A fields fail alone, saying what to set. */
export const a2aNotConfigured: A2ACards = {
  listAgents: () => Promise.reject(notConfigured()),
  card: () => Promise.reject(notConfigured()),
};

function notConfigured(): AppError {
  return new AppError('UPSTREAM_UNAVAILABLE', 'A2A is not configured: set A2A_BASE_URL');
}
