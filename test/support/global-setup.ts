import { loadConfig } from '../../src/config.js';
import { openEmbeddedDatabase } from '../../src/db/embedded/database.js';

/** Builds the embedded snapshot once, so parallel test files each load it in about a second. */
export default async function setup(): Promise<void> {
  const config = loadConfig({});
  if (config.database.kind !== 'embedded') return;
  const database = await openEmbeddedDatabase(config.database);
  await database.driver.close();
}
