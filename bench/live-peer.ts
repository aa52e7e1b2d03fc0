/**
 * The second server of the live scenario's two-process case (bench/subscribers.ts): a
 * process of its own behind the same Redis (REDIS_URL, REDIS_PREFIX from the environment),
 * started once the bench's server holds the poll lock, so that it only relays cycle
 * messages to its subscribers. Prints its URL; stops when its stdin ends.
 */
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { createServer } from '../src/server.js';

const server = await createServer(
  loadConfig({ ...process.env, PORT: '0', SIMULATE: 'false' }),
  pino({ level: 'warn' }),
);
process.stdout.write(`${await server.start()}\n`);
process.stdin.resume();
await new Promise((resolve) => process.stdin.once('end', resolve));
await server.stop();
