/**
 * Turns the process environment into one frozen, typed configuration. Every problem is
 * collected and reported together, so a misconfigured deployment is fixed in one pass.
 */

/**
 * A configuration value as it may be echoed to an operator: whatever stands before an `@`
 * (the `user:password@` of a URL, parsed or not, and Oracle's `user/password@host/service`
 * Easy Connect form) is replaced by `…`. One rule for every message that shows a value the
 * environment gave: config errors, oracle:check, the driver's error details.
 */
export function redactCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/|^|[\s"'(=])[^\s"'()@]*@/gi, '$1…@');
}

export type ViewScope = 'user' | 'dba';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface EmbeddedDatabaseConfig {
  readonly kind: 'embedded';
  /** Owner that the USER_ views show, standing in for the connected Oracle user. */
  readonly sessionUser: string;
  readonly viewScope: ViewScope;
  /** Added to every round trip, to model a remote database. */
  readonly latencyMs: number;
  /** Where the seeded data-directory snapshot is cached between starts. */
  readonly cacheDir: string;
  /** Runs PGlite in a worker thread, off the thread that serves requests. */
  readonly worker: boolean;
  /**
   * The instant the demo history is moved up to when the database opens (epoch ms); null
   * for the moment it opens, so the newest runs are minutes old. Fixed, it gives the same
   * dates on every start (the Oracle contract suite compares them with demoData()).
   */
  readonly demoNow: number | null;
}

export interface OracleDatabaseConfig {
  readonly kind: 'oracle';
  readonly connectString: string;
  readonly user: string;
  readonly password: string;
  readonly configDir: string | undefined;
  readonly walletLocation: string | undefined;
  readonly walletPassword: string | undefined;
  readonly viewScope: ViewScope;
  readonly poolMin: number;
  readonly poolMax: number;
  readonly queueTimeoutMs: number;
  readonly statementCacheSize: number;
  readonly callTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** The call timeout of the start-up dictionary discovery (slow views on Autonomous Database). */
  readonly discoveryTimeoutMs: number;
}

export type DatabaseConfig = EmbeddedDatabaseConfig | OracleDatabaseConfig;

export interface AuthConfig {
  /** Null: no authentication, every caller is an administrator (loopback only by default). */
  readonly jwt:
    | { readonly kind: 'secret'; readonly secret: string }
    | { readonly kind: 'jwks'; readonly url: string }
    | null;
  readonly issuer: string | undefined;
  readonly audience: string | undefined;
  /** Claim naming the database owner the caller acts as. */
  readonly userClaim: string;
  readonly rolesClaim: string;
  readonly allowAnonymous: boolean;
  /** Runtime statistics have no owner: admins only unless this is set. */
  readonly statsPublic: boolean;
}

export interface A2AConfig {
  /**
   * The `…/adb/a2a/v1/databases/{ocid}` prefix. Unset: the embedded stand-in in embedded mode;
   * with Oracle, A2A fields then fail with UPSTREAM_UNAVAILABLE.
   */
  readonly baseUrl: string | undefined;
  readonly token: string | undefined;
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** A2A_TOKEN_URL, or else the one that belongs to baseUrl (`deriveTokenUrl`). */
  readonly tokenUrl: string | undefined;
  readonly timeoutMs: number;
  /** Upper bound on how long a card stays fresh; 0 turns the cross-request cache off. */
  readonly cacheTtlMs: number;
  /** Extra attempts after a 5xx or network error. */
  readonly retries: number;
  /** Largest answer read from the A2A server; past it the request fails unread. */
  readonly maxBodyBytes: number;
  /** Port of the embedded stand-in (0 picks a free one); it listens on 127.0.0.1 only. */
  readonly standinPort: number;
}

/** Bounds on what one request may ask of the server; see docs/security-hardening.md. */
export interface LimitsConfig {
  readonly maxQueryCost: number;
  readonly maxQueryDepth: number;
  readonly maxAliases: number;
  readonly maxDirectives: number;
  readonly maxTokens: number;
  readonly maxBodyBytes: number;
  /** Bound on one serialised result (a response, or one subscription event). */
  readonly maxResponseBytes: number;
  readonly requestTimeoutMs: number;
  /** Open subscriptions on one graphql-ws socket. */
  readonly maxSubscriptionsPerSocket: number;
  /** Open subscriptions of one viewer, over every socket and SSE stream of this process. */
  readonly maxSubscriptionsPerViewer: number;
  /** Action fields (schema/action.ts) in one operation. */
  readonly maxActionsPerOperation: number;
  /** Open live queries (`@live`) of one viewer, over every socket and SSE stream of this process. */
  readonly maxLiveQueriesPerViewer: number;
  /** Open live queries of this process, whoever opened them. */
  readonly maxLiveQueries: number;
}

/** Per-viewer budgets per window, in this process; 0 turns a budget off (the default). */
export interface RateLimitConfig {
  readonly windowMs: number;
  /** Queries (over any transport) per viewer per window. */
  readonly requests: number;
  /** Subscriptions started per viewer per window. */
  readonly subscriptions: number;
  /**
   * Actions (runTeam, respondToHuman: each field, aliases counted) per viewer per window;
   * RATE_LIMIT_REQUESTS unless set, so a budget of operations also bounds what they start.
   */
  readonly actions: number;
}

export interface HttpConfig {
  readonly introspection: boolean;
  /** Browser origins allowed cross-origin access; empty allows none. */
  readonly corsOrigins: readonly string[];
}

export interface TracingConfig {
  /**
   * Base URL of an OTLP/HTTP collector (spans go to its /v1/traces). Unset: tracing is off and
   * costs nothing, since nothing is loaded or wrapped.
   */
  readonly endpoint: string | undefined;
  readonly serviceName: string;
}

export interface ExecuteAgentConfig {
  /**
   * How long one EXECUTE_AGENT call may run before it is cancelled on the database and the
   * mutation answers TIMEOUT. At most REQUEST_TIMEOUT_MS, which bounds the whole operation.
   */
  readonly timeoutMs: number;
}

/** What production GraphQL setups expect of a server; see src/production/. */
export interface ProductionConfig {
  /** TRUSTED_DOCUMENTS: a client preset manifest (`hash → document`), loaded at start. */
  readonly trustedDocuments: string | undefined;
  /** TRUSTED_DOCUMENTS_ONLY: refuse every document that is not in a manifest. */
  readonly trustedDocumentsOnly: boolean;
  /** RESPONSE_CACHE_TTL_MS: how long a query result may be served again; 0 turns the cache off. */
  readonly responseCacheTtlMs: number;
  /**
   * RESPONSE_CACHE_MAX_BYTES: how many bytes of JSON answers the in-memory response cache
   * keeps (least recently used go first); Redis has its own maxmemory.
   */
  readonly responseCacheMaxBytes: number;
  /** FEDERATION: serve the schema as an Apollo Federation 2 subgraph (schema.subgraph.graphql). */
  readonly federation: boolean;
}

/** The simulator's time between moves when SIMULATE_PERIOD_MS is not set (src/db/embedded/simulator.ts). */
export const SIMULATE_PERIOD_MS_DEFAULT = 3_000;

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly logLevel: LogLevel;
  /**
   * LOG_FORMAT: `json` (one object a line), `pretty` (pino-pretty: readable on a terminal),
   * or `auto`, the default: pretty when stdout is a terminal and pino-pretty is installed (a
   * development dependency: never in the image), JSON otherwise. src/logger.ts decides.
   */
  readonly logFormat: LogFormat;
  /**
   * NODE_ENV=development: an administrator's responses carry the operation's statements
   * (src/statement-log.ts). Any other NODE_ENV, production above all, never shows them.
   */
  readonly development: boolean;
  readonly database: DatabaseConfig;
  readonly auth: AuthConfig;
  readonly a2a: A2AConfig;
  readonly live: {
    readonly pollIntervalMs: number;
    /** How far before the last good poll the window for ended runs reaches (clock skew, commit lag). */
    readonly overlapMs: number;
    readonly redisUrl: string | undefined;
    /** Redis ACL user and password (AUTH), kept out of REDIS_URL so that no URL carries them. */
    readonly redisUsername: string | undefined;
    readonly redisPassword: string | undefined;
    /** Prefix of the Redis keys and channel, so that deployments can share one Redis. */
    readonly redisPrefix: string;
    /**
     * How long a Redis command may wait for its answer before it fails: what a stalled Redis
     * costs a query through the response cache, and (at least one poll interval) a claim
     * of the poll lock.
     */
    readonly redisCommandTimeoutMs: number;
    readonly simulate: boolean;
    /** Time between the simulator's moves (src/db/embedded/simulator.ts). */
    readonly simulatePeriodMs: number;
  };
  /**
   * How long the team catalog (pages of teams, a team by name, each team's tools through its
   * tasks) is reused across requests before it is read again; 0 reads it for every request.
   */
  readonly teamToolsCacheTtlMs: number;
  readonly limits: LimitsConfig;
  readonly executeAgent: ExecuteAgentConfig;
  readonly rateLimit: RateLimitConfig;
  readonly http: HttpConfig;
  readonly tracing: TracingConfig;
  readonly production: ProductionConfig;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

export type LogFormat = 'auto' | 'json' | 'pretty';
const LOG_FORMATS: readonly LogFormat[] = ['auto', 'json', 'pretty'];

const LOG_LEVELS: readonly LogLevel[] = [
  'fatal',
  'error',
  'warn',
  'info',
  'debug',
  'trace',
  'silent',
];

class EnvReader {
  readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  string(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  }

  required(name: string, why: string): string {
    const value = this.string(name);
    if (value === undefined) {
      this.problems.push(`${name} is required ${why}`);
      return '';
    }
    return value;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw) || value < min || value > max) {
      this.problems.push(
        `${name} must be a whole number from ${min} to ${max} (got "${redactCredentials(raw)}")`,
      );
      return fallback;
    }
    return value;
  }

  /** An ISO 8601 instant with its offset (2026-10-01T08:00:00Z), as epoch milliseconds. */
  instant(name: string): number | null {
    const raw = this.string(name);
    if (raw === undefined) return null;
    const value = Date.parse(raw);
    if (!/(Z|[+-]\d\d:\d\d)$/i.test(raw) || Number.isNaN(value)) {
      this.problems.push(
        `${name} must be an ISO 8601 instant with a time zone, like 2026-10-01T08:00:00Z (got "${redactCredentials(raw)}")`,
      );
      return null;
    }
    return value;
  }

  boolean(name: string, fallback: boolean): boolean {
    const raw = this.string(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
    if (['0', 'false', 'no', 'off'].includes(raw)) return false;
    this.problems.push(`${name} must be true or false (got "${redactCredentials(raw)}")`);
    return fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.string(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    this.problems.push(
      `${name} must be one of ${allowed.join(', ')} (got "${redactCredentials(raw)}")`,
    );
    return fallback;
  }

  /**
   * A URL without `user:password@`: credentials inside a URL travel into every message and
   * log line that names the URL, so each service has variables of its own for them.
   */
  url(
    name: string,
    protocols?: readonly string[],
    options: { credentialsIn?: string; httpOnlyOnLoopback?: boolean } = {},
  ): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      this.problems.push(`${name} must be an absolute URL (got "${redactCredentials(raw)}")`);
      return undefined;
    }
    if (url.username !== '' || url.password !== '') {
      const instead = options.credentialsIn ? `; set ${options.credentialsIn} instead` : '';
      this.problems.push(`${name} must not carry a user name or password${instead}`);
      return undefined;
    }
    if (options.httpOnlyOnLoopback) {
      const loopbackHttp =
        url.protocol === 'http:' && isLoopback(url.hostname.replace(/^\[|\]$/g, ''));
      if (url.protocol !== 'https:' && !loopbackHttp) {
        this.problems.push(
          `${name} must be an https URL, or http on loopback (got "${redactCredentials(raw)}")`,
        );
        return undefined;
      }
    } else if (protocols && !protocols.includes(url.protocol)) {
      this.problems.push(
        `${name} must be a ${protocols.join(' or ')} URL (got "${redactCredentials(raw)}")`,
      );
      return undefined;
    }
    return raw;
  }
}

function readDatabase(env: EnvReader): DatabaseConfig {
  const connectString = env.string('ORACLE_CONNECT_STRING');
  const viewScopes: readonly ViewScope[] = ['user', 'dba'];
  if (connectString === undefined) {
    return {
      kind: 'embedded',
      sessionUser: (env.string('EMBEDDED_SESSION_USER') ?? 'APP_USER').toUpperCase(),
      viewScope: env.oneOf('ORACLE_VIEW_SCOPE', viewScopes, 'dba'),
      latencyMs: env.integer('EMBEDDED_LATENCY_MS', 0, 0, 10_000),
      cacheDir: env.string('EMBEDDED_CACHE_DIR') ?? 'node_modules/.cache/agent-graph',
      worker: env.boolean('EMBEDDED_WORKER', true),
      demoNow: env.instant('EMBEDDED_DEMO_NOW'),
    };
  }
  const why = 'when ORACLE_CONNECT_STRING is set';
  const poolMin = env.integer('DB_POOL_MIN', 1, 0, 1000);
  const poolMax = env.integer('DB_POOL_MAX', 8, 1, 1000);
  if (poolMin > poolMax)
    env.problems.push(`DB_POOL_MIN (${poolMin}) exceeds DB_POOL_MAX (${poolMax})`);
  return {
    kind: 'oracle',
    connectString,
    user: env.required('ORACLE_USER', why),
    password: env.required('ORACLE_PASSWORD', why),
    configDir: env.string('ORACLE_CONFIG_DIR'),
    walletLocation: env.string('ORACLE_WALLET_LOCATION'),
    walletPassword: env.string('ORACLE_WALLET_PASSWORD'),
    viewScope: env.oneOf('ORACLE_VIEW_SCOPE', viewScopes, 'user'),
    poolMin,
    poolMax,
    queueTimeoutMs: env.integer('DB_QUEUE_TIMEOUT_MS', 5_000, 0, 600_000),
    statementCacheSize: env.integer('DB_STATEMENT_CACHE_SIZE', 60, 0, 10_000),
    callTimeoutMs: env.integer('DB_CALL_TIMEOUT_MS', 10_000, 1, 600_000),
    connectTimeoutMs: env.integer('DB_CONNECT_TIMEOUT_MS', 10_000, 1, 600_000),
    discoveryTimeoutMs: env.integer('DB_DISCOVERY_TIMEOUT_MS', 60_000, 1, 600_000),
  };
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

function readAuth(env: EnvReader, host: string): AuthConfig {
  const secret = env.string('AUTH_JWT_SECRET');
  const jwksUrl = env.url('AUTH_JWKS_URL', undefined, { httpOnlyOnLoopback: true });
  if (secret && jwksUrl) env.problems.push('set AUTH_JWT_SECRET or AUTH_JWKS_URL, not both');
  if (secret && secret.length < 32) {
    env.problems.push('AUTH_JWT_SECRET must be at least 32 characters (HS256 needs a 256-bit key)');
  }
  const jwt = secret
    ? ({ kind: 'secret', secret } as const)
    : jwksUrl
      ? ({ kind: 'jwks', url: jwksUrl } as const)
      : null;
  const allowAnonymous = env.boolean('ALLOW_ANONYMOUS', false);
  if (!jwt && !allowAnonymous && !isLoopback(host)) {
    env.problems.push(
      `HOST=${host} is not a loopback address and no authentication is configured: set AUTH_JWT_SECRET or AUTH_JWKS_URL, or ALLOW_ANONYMOUS=true to serve every caller as an administrator`,
    );
  }
  return {
    jwt,
    issuer: env.string('AUTH_ISSUER'),
    audience: env.string('AUTH_AUDIENCE'),
    userClaim: env.string('AUTH_USER_CLAIM') ?? 'db_user',
    rolesClaim: env.string('AUTH_ROLES_CLAIM') ?? 'roles',
    allowAnonymous,
    statsPublic: env.boolean('STATS_PUBLIC', false),
  };
}

function readA2A(env: EnvReader): A2AConfig {
  const http = ['http:', 'https:'];
  const a2aCredentials = { credentialsIn: 'A2A_TOKEN or A2A_USERNAME/A2A_PASSWORD' };
  const baseUrl = env.url('A2A_BASE_URL', http, a2aCredentials);
  const username = env.string('A2A_USERNAME');
  const password = env.string('A2A_PASSWORD');
  const derived = baseUrl === undefined ? null : deriveTokenUrl(baseUrl);
  const tokenUrl = env.url('A2A_TOKEN_URL', http, a2aCredentials) ?? derived ?? undefined;
  if ((username === undefined) !== (password === undefined)) {
    env.problems.push('A2A_USERNAME and A2A_PASSWORD must be set together');
  }
  if (baseUrl !== undefined && username !== undefined && tokenUrl === undefined) {
    env.problems.push(
      'A2A_TOKEN_URL is required when A2A_BASE_URL does not end in /adb/a2a/v1/databases/{ocid}',
    );
  }
  return {
    baseUrl,
    token: env.string('A2A_TOKEN'),
    username,
    password,
    tokenUrl,
    timeoutMs: env.integer('A2A_TIMEOUT_MS', 3000, 1, 600_000),
    cacheTtlMs: env.integer('A2A_CACHE_TTL_MS', 60_000, 0, 86_400_000),
    retries: env.integer('A2A_RETRIES', 2, 0, 10),
    maxBodyBytes: env.integer('A2A_MAX_BODY_BYTES', 1_048_576, 1_024, 1_073_741_824),
    standinPort: env.integer('A2A_STANDIN_PORT', 0, 0, 65_535),
  };
}

function readLimits(env: EnvReader): LimitsConfig {
  return {
    maxQueryCost: env.integer('MAX_QUERY_COST', 200_000, 1, 1_000_000_000),
    maxQueryDepth: env.integer('MAX_QUERY_DEPTH', 12, 1, 1_000),
    maxAliases: env.integer('MAX_ALIASES', 15, 0, 100_000),
    maxDirectives: env.integer('MAX_DIRECTIVES', 50, 0, 100_000),
    maxTokens: env.integer('MAX_TOKENS', 1_000, 1, 1_000_000),
    maxBodyBytes: env.integer('MAX_BODY_BYTES', 1_048_576, 1_024, 1_073_741_824),
    maxResponseBytes: env.integer('MAX_RESPONSE_BYTES', 16_777_216, 1_024, 1_073_741_824),
    requestTimeoutMs: env.integer('REQUEST_TIMEOUT_MS', 30_000, 1, 3_600_000),
    maxSubscriptionsPerSocket: env.integer('MAX_SUBSCRIPTIONS_PER_SOCKET', 100, 1, 1_000_000),
    maxSubscriptionsPerViewer: env.integer('MAX_SUBSCRIPTIONS_PER_VIEWER', 1_000, 1, 1_000_000),
    maxActionsPerOperation: env.integer('MAX_ACTIONS_PER_OPERATION', 5, 1, 1_000),
    maxLiveQueriesPerViewer: env.integer('MAX_LIVE_QUERIES_PER_VIEWER', 100, 1, 1_000_000),
    maxLiveQueries: env.integer('MAX_LIVE_QUERIES', 5_000, 1, 1_000_000),
  };
}

function readExecuteAgent(env: EnvReader, limits: LimitsConfig): ExecuteAgentConfig {
  // Unset, it follows a lowered REQUEST_TIMEOUT_MS; set above it, it could never apply.
  const timeoutMs = env.integer(
    'EXECUTE_AGENT_TIMEOUT_MS',
    Math.min(20_000, limits.requestTimeoutMs),
    1,
    3_600_000,
  );
  if (timeoutMs > limits.requestTimeoutMs) {
    env.problems.push(
      `EXECUTE_AGENT_TIMEOUT_MS (${timeoutMs}) exceeds REQUEST_TIMEOUT_MS (${limits.requestTimeoutMs}), which would end the operation first: raise REQUEST_TIMEOUT_MS too`,
    );
  }
  return { timeoutMs };
}

function readRateLimit(env: EnvReader): RateLimitConfig {
  const windowMs = env.integer('RATE_LIMIT_WINDOW_MS', 60_000, 1_000, 86_400_000);
  const requests = env.integer('RATE_LIMIT_REQUESTS', 0, 0, 1_000_000_000);
  return {
    windowMs,
    requests,
    subscriptions: env.integer('RATE_LIMIT_SUBSCRIPTIONS', 0, 0, 1_000_000_000),
    actions: env.integer('RATE_LIMIT_ACTIONS', requests, 0, 1_000_000_000),
  };
}

function readHttp(env: EnvReader): HttpConfig {
  const corsOrigins: string[] = [];
  for (const entry of (env.string('CORS_ORIGINS') ?? '').split(',')) {
    const raw = entry.trim();
    if (raw === '') continue;
    const origin = originOf(raw);
    if (origin === undefined) {
      env.problems.push(
        `CORS_ORIGINS entries must be origins such as https://app.example.com (got "${redactCredentials(raw)}")`,
      );
    } else {
      corsOrigins.push(origin);
    }
  }
  return { introspection: env.boolean('INTROSPECTION', true), corsOrigins };
}

/** The serialised origin (as browsers send it in `Origin`), when `raw` names nothing more. */
function originOf(raw: string): string | undefined {
  try {
    const url = new URL(raw);
    const bare = url.pathname === '/' && !url.search && !url.hash && !url.username;
    return bare && url.origin !== 'null' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

function readTracing(env: EnvReader): TracingConfig {
  return {
    endpoint: env.url('OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']),
    serviceName: env.string('OTEL_SERVICE_NAME') ?? 'agent-graph',
  };
}

function readProduction(env: EnvReader): ProductionConfig {
  const trustedDocuments = env.string('TRUSTED_DOCUMENTS');
  const trustedDocumentsOnly = env.boolean('TRUSTED_DOCUMENTS_ONLY', false);
  return {
    trustedDocuments,
    trustedDocumentsOnly,
    responseCacheTtlMs: env.integer('RESPONSE_CACHE_TTL_MS', 0, 0, 86_400_000),
    responseCacheMaxBytes: env.integer(
      'RESPONSE_CACHE_MAX_BYTES',
      64 * 1024 * 1024,
      64 * 1024,
      16 * 1024 * 1024 * 1024,
    ),
    federation: env.boolean('FEDERATION', false),
  };
}

export function loadConfig(rawEnv: Env): Config {
  const env = new EnvReader(rawEnv);
  const database = readDatabase(env);
  const host = env.string('HOST') ?? '127.0.0.1';
  const limits = readLimits(env);
  const config: Config = {
    host,
    port: env.integer('PORT', 4000, 0, 65_535),
    logLevel: env.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    logFormat: env.oneOf('LOG_FORMAT', LOG_FORMATS, 'auto'),
    development: env.string('NODE_ENV') === 'development',
    database,
    auth: readAuth(env, host),
    a2a: readA2A(env),
    live: {
      pollIntervalMs: env.integer('POLL_INTERVAL_MS', 2000, 50, 3_600_000),
      overlapMs: env.integer('POLL_OVERLAP_MS', 5000, 0, 3_600_000),
      redisUrl: env.url('REDIS_URL', ['redis:', 'rediss:'], {
        credentialsIn: 'REDIS_USERNAME/REDIS_PASSWORD',
      }),
      redisUsername: env.string('REDIS_USERNAME'),
      redisPassword: env.string('REDIS_PASSWORD'),
      redisPrefix: env.string('REDIS_PREFIX') ?? 'agentgraph:',
      redisCommandTimeoutMs: env.integer('REDIS_COMMAND_TIMEOUT_MS', 1_000, 10, 60_000),
      simulate: env.boolean('SIMULATE', database.kind === 'embedded'),
      simulatePeriodMs: env.integer(
        'SIMULATE_PERIOD_MS',
        SIMULATE_PERIOD_MS_DEFAULT,
        100,
        3_600_000,
      ),
    },
    teamToolsCacheTtlMs: env.integer('TEAM_TOOLS_CACHE_TTL_MS', 60_000, 0, 86_400_000),
    limits,
    executeAgent: readExecuteAgent(env, limits),
    rateLimit: readRateLimit(env),
    http: readHttp(env),
    tracing: readTracing(env),
    production: readProduction(env),
  };
  if (env.problems.length > 0) throw new ConfigError(env.problems);
  return deepFreeze(config);
}

function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) {
    if (child !== null && typeof child === 'object') deepFreeze(child);
  }
  return Object.freeze(value);
}

const A2A_BASE_PATH = /^(.*)\/adb\/a2a\/v1\/databases\/([^/]+)$/;

/**
 * The token endpoint that belongs to an A2A base URL: same origin and OCID, auth path. Null
 * when the base URL does not have Oracle's layout (then A2A_TOKEN_URL must say where it is).
 */
export function deriveTokenUrl(baseUrl: string): string | null {
  const url = new URL(baseUrl.replace(/\/+$/, ''));
  const match = A2A_BASE_PATH.exec(url.pathname);
  if (!match) return null;
  return `${url.origin}${match[1]}/adb/auth/v1/databases/${match[2]}/token`;
}
