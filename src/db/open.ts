import type { DatabaseConfig } from '../config.js';
import type { Driver } from './driver.js';
import { type EmbeddedDatabase, openEmbeddedDatabase } from './embedded/database.js';
import { openOracleDriver } from './oracle/driver.js';

export interface OpenDatabase {
  readonly driver: Driver;
  /** Present in embedded mode, for the simulator and the A2A stand-in. */
  readonly embedded: EmbeddedDatabase | undefined;
}

export interface OpenOptions {
  /** Conditions worth one log line that do not stop the server. */
  readonly warn?: (message: string) => void;
}

/** Oracle when ORACLE_CONNECT_STRING is set (fails with a StartupError), else embedded. */
export async function openDatabase(
  config: DatabaseConfig,
  options: OpenOptions = {},
): Promise<OpenDatabase> {
  if (config.kind === 'embedded') {
    const embedded = await openEmbeddedDatabase(config);
    return { driver: embedded.driver, embedded };
  }
  return { driver: await openOracleDriver(config, options.warn), embedded: undefined };
}
