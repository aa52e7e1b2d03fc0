/**
 * Turns the process environment into one frozen, typed configuration. Every problem is
 * collected and reported together, so a misconfigured deployment is fixed in one pass.
 */

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
}

export type DatabaseConfig = EmbeddedDatabaseConfig | OracleDatabaseConfig;

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly logLevel: LogLevel;
  readonly database: DatabaseConfig;
  readonly live: {
    readonly pollIntervalMs: number;
    /** How far before the last good poll the window for ended runs reaches (clock skew, commit lag). */
    readonly overlapMs: number;
    readonly redisUrl: string | undefined;
    /** Prefix of the Redis keys and channel, so that deployments can share one Redis. */
    readonly redisPrefix: string;
    readonly simulate: boolean;
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

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
      this.problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  }

  boolean(name: string, fallback: boolean): boolean {
    const raw = this.string(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
    if (['0', 'false', 'no', 'off'].includes(raw)) return false;
    this.problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.string(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
    return fallback;
  }

  url(name: string): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    try {
      new URL(raw);
      return raw;
    } catch {
      this.problems.push(`${name} must be an absolute URL (got "${raw}")`);
      return undefined;
    }
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
  };
}

export function loadConfig(rawEnv: Env): Config {
  const env = new EnvReader(rawEnv);
  const database = readDatabase(env);
  const config: Config = {
    host: env.string('HOST') ?? '127.0.0.1',
    port: env.integer('PORT', 4000, 0, 65_535),
    logLevel: env.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    database,
    live: {
      pollIntervalMs: env.integer('POLL_INTERVAL_MS', 2000, 50, 3_600_000),
      overlapMs: env.integer('POLL_OVERLAP_MS', 5000, 0, 3_600_000),
      redisUrl: env.url('REDIS_URL'),
      redisPrefix: env.string('REDIS_PREFIX') ?? 'agentgraph:',
      simulate: env.boolean('SIMULATE', database.kind === 'embedded'),
    },
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
