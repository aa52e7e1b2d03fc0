import type { Logger } from 'pino';
import type { DatabaseConfig } from '../config.js';
import type { Driver } from './driver.js';
import type { EmbeddedDatabase, StartupLog } from './embedded/database.js';
import { runInUtc } from './process-zone.js';

export interface OpenDatabase {
  readonly driver: Driver;
  /** Present in embedded mode, for the simulator and the A2A stand-in. */
  readonly embedded: EmbeddedDatabase | undefined;
}

export interface OpenOptions {
  /** Conditions worth one log line that do not stop the server. */
  readonly warn?: (message: string) => void;
  /** What a slow start is doing, and how long it took. */
  readonly info?: StartupLog;
}

/**
 * Oracle when ORACLE_CONNECT_STRING is set (fails with a StartupError), else embedded. Each
 * driver is imported only when chosen, so neither mode pays for loading the other.
 */
export async function openDatabase(
  config: DatabaseConfig,
  options: OpenOptions = {},
): Promise<OpenDatabase> {
  // Before either driver reads a date, and before the embedded worker thread starts.
  runInUtc();
  if (config.kind === 'embedded') {
    const { openEmbeddedDatabase } = config.worker
      ? { openEmbeddedDatabase: (await import('./embedded/worker.js')).openEmbeddedWorker }
      : await import('./embedded/database.js');
    const embedded = await openEmbeddedDatabase(config, options.warn, options.info);
    return { driver: embedded.driver, embedded };
  }
  const { openOracleDriver } = await import('./oracle/driver.js');
  return { driver: await openOracleDriver(config, options.warn), embedded: undefined };
}

/** The database, its start-up lines (a slow seeding, a damaged snapshot) logged on `logger`. */
export function openLoggedDatabase(
  config: DatabaseConfig,
  logger: Pick<Logger, 'warn' | 'info'>,
): Promise<OpenDatabase> {
  return openDatabase(config, {
    warn: (message) => logger.warn(message),
    info: (fields, message) => logger.info(fields, message),
  });
}
