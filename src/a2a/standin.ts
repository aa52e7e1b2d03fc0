import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentCard as SdkAgentCard } from '@a2a-js/sdk';
import type { Logger } from 'pino';
import type { CatalogTool } from './drift.js';
import { a2aBasePath, tokenPath } from './paths.js';

/** The team and tool catalog the stand-in publishes. */
export interface A2ACatalog {
  readonly teams: readonly {
    readonly name: string;
    readonly description: string | null;
    readonly tools: readonly CatalogTool[];
  }[];
}

export interface A2AStandinOptions {
  loadCatalog(): Promise<A2ACatalog>;
  /** How long one catalog read serves later requests (default 1000 ms; 0: read per request). */
  readonly catalogReuseMs?: number;
  /** The username and password the token endpoint accepts. */
  readonly credentials: { readonly username: string; readonly password: string };
  /** Tokens accepted without being issued here (A2A_TOKEN). */
  readonly staticTokens?: readonly string[];
  readonly host?: string;
  readonly port?: number;
  readonly ocid?: string;
  /** Cache-Control max-age of list and card answers. */
  readonly maxAgeSeconds?: number;
  /** Called after each answer, to count requests in tests and benchmarks. */
  readonly onRequest?: (request: {
    readonly method: string;
    readonly path: string;
    readonly status: number;
  }) => void;
  readonly logger?: Logger;
}

export interface A2AStandin {
  /** The A2A_BASE_URL equivalent: `http://127.0.0.1:{port}/adb/a2a/v1/databases/{ocid}`. */
  readonly baseUrl: string;
  readonly tokenUrl: string;
  /** Requests answered so far, whatever their status. */
  readonly requestCount: number;
  /** Invalidates every issued token, as an expiry would. */
  revokeTokens(): void;
  stop(): Promise<void>;
}

export const EMBEDDED_OCID = 'ocid1.autonomousdatabase.oc1..embedded';

/** Issued tokens kept valid; older ones lapse, as tokens expire at Oracle. */
const MAX_TOKENS = 100;
const TOKEN_LIFETIME_S = 3600;

/**
 * The card seed 001 describes for a team: name ← team name, description ← team description
 * or the team name, one skill per tool with id ← tool id, name ← tool name, description ←
 * instruction. Built as the SDK's 1.0 type and written with the SDK's 1.0 JSON codec.
 */
function teamCard(team: A2ACatalog['teams'][number], teamUrl: string, tokenUrl: string): unknown {
  const seen = new Set<string>();
  const card: SdkAgentCard = {
    name: team.name,
    description: team.description ?? team.name,
    version: '1.0.0',
    supportedInterfaces: [
      { url: teamUrl, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    ],
    provider: { organization: 'Oracle', url: 'https://www.oracle.com/autonomous-database/' },
    capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    securitySchemes: {
      bearer: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: {
            description: `Database user token from POST ${tokenUrl}`,
            scheme: 'Bearer',
            bearerFormat: '',
          },
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: team.tools
      .filter((tool) => !seen.has(tool.name) && seen.add(tool.name))
      .map((tool) => ({
        id: tool.toolId,
        name: tool.name,
        description: tool.instruction ?? '',
        tags: [],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      })),
    signatures: [],
  };
  return SdkAgentCard.toJSON(card);
}

/**
 * Autonomous Database's A2A discovery endpoints (list, card, token) at Oracle's paths, over
 * a catalog the caller supplies: what embedded mode points the A2A client at, so that cards
 * work with no configuration. It serves discovery only, not the agents' message endpoints.
 */
export async function startA2AStandin(options: A2AStandinOptions): Promise<A2AStandin> {
  const ocid = options.ocid ?? EMBEDDED_OCID;
  const maxAge = options.maxAgeSeconds ?? 60;
  const issued = new Map<string, number>();
  const staticTokens = new Set(options.staticTokens ?? []);
  let requestCount = 0;
  let origin = '';
  // A dashboard asks for many cards at once. In embedded mode the database runs on this
  // thread, so those requests arrive one after another rather than together: a read made
  // within the last catalogReuseMs serves them all.
  const reuseMs = options.catalogReuseMs ?? 1000;
  let catalogRead: { readonly at: number; readonly catalog: Promise<A2ACatalog> } | undefined;
  const loadCatalog = () => {
    if (!catalogRead || performance.now() - catalogRead.at > reuseMs) {
      const read = { at: performance.now(), catalog: options.loadCatalog() };
      read.catalog.catch(() => {
        if (catalogRead === read) catalogRead = undefined;
      });
      catalogRead = read;
    }
    return catalogRead.catalog;
  };

  const basePath = a2aBasePath(ocid);
  const agentsPath = `${basePath}/agents/`;
  const cardPath = new RegExp(
    `^${escapeRegExp(agentsPath)}([^/]+)/\\.well-known/agent-card\\.json$`,
  );

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    res.on('finish', () => {
      requestCount++;
      options.onRequest?.({ method: req.method ?? '', path, status: res.statusCode });
    });
    handle(req, res, path).catch((error: unknown) => {
      options.logger?.error({ err: error, path }, 'A2A stand-in failed');
      if (!res.headersSent) json(res, 500, { error: 'internal_error' });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (path === tokenPath(ocid)) {
      if (req.method !== 'POST') return json(res, 405, { error: 'method_not_allowed' });
      return issueToken(req, res);
    }
    const isList = path === agentsPath || path === agentsPath.slice(0, -1);
    const card = cardPath.exec(path);
    if (!isList && !card) return json(res, 404, { error: 'not_found' });
    if (req.method !== 'GET') return json(res, 405, { error: 'method_not_allowed' });
    if (!authorized(req.headers.authorization)) {
      res.setHeader('www-authenticate', 'Bearer realm="a2a"');
      return json(res, 401, { error: 'unauthorized' });
    }
    const catalog = await loadCatalog();
    const teamUrl = (name: string) => `${origin}${agentsPath}${encodeURIComponent(name)}`;
    if (isList) {
      const listing = catalog.teams.map((team) => ({
        agent_card_url: `${teamUrl(team.name)}/.well-known/agent-card.json`,
        name: team.name,
        description: team.description ?? team.name,
      }));
      return cacheable(req, res, listing);
    }
    const name = decodeURIComponent(card?.[1] ?? '');
    const team = catalog.teams.find((t) => t.name === name);
    if (!team) return json(res, 404, { error: 'not_found', message: `No agent team ${name}` });
    return cacheable(req, res, teamCard(team, teamUrl(team.name), `${origin}${tokenPath(ocid)}`));
  }

  async function issueToken(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: { grant_type?: unknown; username?: unknown; password?: unknown };
    try {
      body = JSON.parse(await readBody(req)) ?? {};
    } catch {
      return json(res, 400, { error: 'invalid_request' });
    }
    if (body.grant_type !== 'password') return json(res, 400, { error: 'unsupported_grant_type' });
    const { username, password } = options.credentials;
    if (!sameText(body.username, username) || !sameText(body.password, password)) {
      return json(res, 401, { error: 'invalid_grant' });
    }
    const token = randomBytes(24).toString('base64url');
    issued.set(token, Date.now() + TOKEN_LIFETIME_S * 1000);
    if (issued.size > MAX_TOKENS) issued.delete(issued.keys().next().value as string);
    res.setHeader('cache-control', 'no-store');
    return json(res, 200, {
      access_token: token,
      token_type: 'Bearer',
      expires_in: TOKEN_LIFETIME_S,
    });
  }

  function authorized(header: string | undefined): boolean {
    const token = /^Bearer (\S+)$/i.exec(header ?? '')?.[1];
    if (token === undefined) return false;
    if (staticTokens.has(token)) return true;
    const expiresAt = issued.get(token);
    return expiresAt !== undefined && expiresAt > Date.now();
  }

  function cacheable(req: IncomingMessage, res: ServerResponse, value: unknown): void {
    const body = JSON.stringify(value);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    res.setHeader('etag', etag);
    res.setHeader('cache-control', `private, max-age=${maxAge}`);
    if (matchesEtag(req.headers['if-none-match'], etag)) {
      res.writeHead(304);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  origin = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;

  return {
    baseUrl: `${origin}${basePath}`,
    tokenUrl: `${origin}${tokenPath(ocid)}`,
    get requestCount() {
      return requestCount;
    },
    revokeTokens: () => issued.clear(),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === etag || tag === '*');
}

function sameText(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const hash = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(hash(given), hash(expected));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 64 * 1024) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
