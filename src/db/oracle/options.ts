import type { Connection, PoolAttributes } from 'oracledb';
import type { OracleDatabaseConfig } from '../../config.js';
import { redactCredentials } from '../../config.js';

/** What the session callback needs of a connection. */
export type SessionConnection = Pick<Connection, 'execute'>;

/**
 * The session time zone of every new pooled connection: UTC, as the catalog's dates are.
 * Thin otherwise sets it from the Node process's TZ, and a Date bind (a TIMESTAMP holding
 * the UTC wall clock) compared with a TIMESTAMP WITH TIME ZONE column would then be read in
 * that zone and shift filters and the live poll by its offset. CURRENT_TIMESTAMP follows it
 * too. An offset needs no time-zone file, unlike a region name.
 */
export const SESSION_TIME_ZONE = "ALTER SESSION SET TIME_ZONE = '+00:00'";

/**
 * Binary sorting and comparison, whatever the instance or a logon trigger sets: a linguistic
 * NLS_SORT (implied by an NLS_LANGUAGE such as GERMAN) makes ORDER BY linguistic while `<`
 * and `>` stay binary (NLS_COMP), so a keyset page (src/db/sql/pages.ts, keysetParts)
 * would skip or repeat rows, and a _CI sort could tie two team names a list orders by.
 * BINARY is also PGlite's byte order, which the embedded tests run under.
 */
export const SESSION_SORT = 'NLS_SORT = BINARY NLS_COMP = BINARY';

/** What every new pooled session is set to, in one statement (one round trip). */
export const SESSION_SETTINGS = `${SESSION_TIME_ZONE} ${SESSION_SORT}`;

/** node-oracledb's sessionCallback: runs once per new session, before the pool hands it out. */
export function sessionCallback(
  connection: SessionConnection,
  _requestedTag: string,
  done: (error?: Error) => void,
): void {
  connection.execute(SESSION_SETTINGS).then(
    () => done(),
    (error: Error) => done(error),
  );
}

/**
 * Pool attributes from the configuration, kept pure so that every wallet and TLS variant is
 * unit-tested without a database.
 *
 * `poolMin` is always 0: node-oracledb's Thin pool restores poolMin in a background loop that
 * retries without a pause while the database refuses connections (one core at 100 % for as
 * long as the outage lasts, measured with 26.0). DB_POOL_MIN connections are opened at
 * start-up instead, and `poolTimeout: 0` keeps idle connections open, so the pool stays warm
 * without the loop.
 */
export function poolAttributes(config: OracleDatabaseConfig): PoolAttributes {
  // node-oracledb takes whole seconds here.
  const connectSeconds = Math.max(1, Math.ceil(config.connectTimeoutMs / 1000));
  const attributes: PoolAttributes = {
    user: config.user,
    password: config.password,
    connectString: config.connectString,
    poolMin: 0,
    poolMax: config.poolMax,
    poolIncrement: 1,
    poolTimeout: 0,
    queueTimeout: config.queueTimeoutMs,
    stmtCacheSize: config.statementCacheSize,
    enableStatistics: true,
    sessionCallback,
    // Bound every new connection (start-up, and reconnects while serving) by the same limit;
    // a descriptor's own CONNECT_TIMEOUT or RETRY_COUNT still applies inside it.
    connectTimeout: connectSeconds,
    transportConnectTimeout: connectSeconds,
  };
  if (config.configDir !== undefined) attributes.configDir = config.configDir;
  // An Autonomous Database wallet unzips tnsnames.ora and ewallet.pem into one directory, so a
  // wallet password without a wallet location means the configuration directory.
  const walletLocation =
    config.walletLocation ?? (config.walletPassword !== undefined ? config.configDir : undefined);
  if (walletLocation !== undefined) attributes.walletLocation = walletLocation;
  if (config.walletPassword !== undefined) attributes.walletPassword = config.walletPassword;
  return attributes;
}

/**
 * A short, secret-free name for the database in operator messages: `host:port/service` for a
 * connect descriptor (which can run to several hundred characters), else the string as given
 * (Easy Connect or a tnsnames.ora alias).
 */
export function connectTarget(connectString: string): string {
  const value = connectString.trim();
  if (!value.startsWith('(')) return redactCredentials(value);
  const field = (name: string) =>
    new RegExp(`\\(\\s*${name}\\s*=\\s*([^)\\s]+)\\s*\\)`, 'i').exec(value)?.[1];
  const host = field('host');
  if (host === undefined) return 'the configured connect descriptor';
  const protocol = field('protocol')?.toLowerCase();
  const port = field('port');
  const service = field('service_name') ?? field('sid');
  return `${protocol === 'tcps' ? 'tcps://' : ''}${host}${port ? `:${port}` : ''}${service ? `/${service}` : ''}`;
}
