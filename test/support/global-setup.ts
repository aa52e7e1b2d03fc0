import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../src/config.js';
import { openEmbeddedDatabase } from '../../src/db/embedded/database.js';
import { provideRedis } from './redis.js';

/**
 * Builds the embedded snapshot once, so parallel test files each load it in about a second,
 * and finds the Redis the live tests share (starting a private one when needed).
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const stopRedis = await provideRedis((redis) => project.provide('redis', redis));
  const config = loadConfig({});
  if (config.database.kind === 'embedded') {
    const database = await openEmbeddedDatabase(config.database);
    await database.driver.close();
  }
  return stopRedis;
}
