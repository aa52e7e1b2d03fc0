import type { DatabaseConfig } from '../config.js';
import type { Driver } from './driver.js';
import { type EmbeddedDatabase, openEmbeddedDatabase } from './embedded/database.js';

export interface OpenDatabase {
  readonly driver: Driver;
  /** Present in embedded mode, for the simulator and the A2A stand-in. */
  readonly embedded: EmbeddedDatabase | undefined;
}

export async function openDatabase(config: DatabaseConfig): Promise<OpenDatabase> {
  if (config.kind === 'embedded') {
    const embedded = await openEmbeddedDatabase(config);
    return { driver: embedded.driver, embedded };
  }
  throw new Error('ORACLE_CONNECT_STRING is set, but this build has no Oracle driver yet');
}
