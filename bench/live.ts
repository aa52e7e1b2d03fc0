/**
 * The live scenario of `npm run bench` alone (bench/subscribers.ts), with its counts from the
 * command line:
 *
 *   npm run bench:live -- --subscribers 5000,10000,20000 [--interval 2000]
 *   npm run bench:live -- --subscribers 5000 --processes 2   (each count on each of two
 *       processes behind Redis: REDIS_URL, else redis://127.0.0.1:6379, with a fresh prefix)
 *   npm run bench:live -- --subscribers 10000 --forms 10   (the subscribers spread over ten
 *       differently written forms of the same subscription, bench/subscriber-clients.ts)
 *   npm run bench:live -- --subscribers 5000 --heap-snapshots /tmp/heap   (V8 heap snapshots
 *       with the first subscriber and at each count, to compare by constructor)
 *   npm run bench:live -- --live-queries 1000 [--interval 2000]   (live dashboards instead of
 *       subscribers, bench/live-queries.ts; writes bench/results-live-queries.json)
 *
 * Writes bench/results-live.json and prints the table. Each subscriber holds one socket in
 * this process and one in the client process, so each count must fit the open-file limit
 * (`ulimit -n`), which is checked first.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { parseCommand } from '../src/command-line.js';

const { values, fail } = parseCommand({
  name: 'npm run bench:live --',
  about: `The live scenario of \`npm run bench\` alone: idle graphql-ws subscribers (or live
queries) on a server process, runs changing state, delivery latency per count. Writes
bench/results-live.json (bench/results-live-queries.json with --live-queries) and prints the
table. Each subscriber holds one socket here and one in the client process: raise
\`ulimit -n\` to twice the largest count.`,
  options: {
    subscribers: {
      type: 'string',
      default: '1000,5000',
      placeholder: 'n,n,…',
      description: 'subscriber counts, one run each',
    },
    interval: {
      type: 'string',
      default: '2000',
      placeholder: 'ms',
      description: 'POLL_INTERVAL_MS',
    },
    processes: {
      type: 'string',
      default: '1',
      placeholder: '1|2',
      description: '2: each count on two processes behind Redis (REDIS_URL, else 127.0.0.1:6379)',
    },
    forms: {
      type: 'string',
      default: '1',
      placeholder: '1-10',
      description: 'differently written forms of the same subscription',
    },
    'heap-snapshots': {
      type: 'string',
      placeholder: 'dir',
      description: 'write V8 heap snapshots there, with the first subscriber and at each count',
    },
    'live-queries': {
      type: 'string',
      placeholder: 'n',
      description: 'n live dashboards (@live, half with patches) instead of subscribers',
    },
  },
  environment: { REDIS_URL: 'the Redis of --processes 2' },
});
if (values['live-queries'] !== undefined) {
  const count = Number(values['live-queries']);
  const interval = Number(values.interval);
  if (!Number.isInteger(count) || count < 2 || !(interval > 0)) {
    fail('--live-queries takes a whole number of at least 2, --interval a positive number');
  }
  // Loaded once the arguments are checked (src/command-line.ts says why).
  const { runLiveQueries } = await import('./live-queries.js');
  const row = await runLiveQueries(count, interval);
  await writeFile(
    new URL('./results-live-queries.json', import.meta.url),
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, row }, null, 2)}\n`,
  );
  process.stdout.write(`${JSON.stringify(row, null, 2)}\n`);
  process.exit(0);
}
const processes = Number(values.processes);
const counts = (values.subscribers ?? '').split(',').map(Number);
const intervalMs = Number(values.interval);
const forms = Number(values.forms);
if (
  counts.some((n) => !Number.isInteger(n) || n < 2) ||
  !(intervalMs > 0) ||
  ![1, 2].includes(processes) ||
  !(Number.isInteger(forms) && forms >= 1 && forms <= 10)
) {
  fail(
    '--subscribers takes whole numbers of at least 2, --interval a positive number, --processes 1 or 2, --forms 1 to 10',
  );
}

/** Sockets, the database and the runtime's own descriptors, beyond one per subscriber. */
const SPARE_DESCRIPTORS = 200;
const openFileLimit = () => {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  const soft = line?.split(/\s{2,}/)[1];
  return soft === undefined || soft === 'unlimited' ? Number.POSITIVE_INFINITY : Number(soft);
};
const limit = openFileLimit();
const largest = Math.max(...counts);
if (largest + SPARE_DESCRIPTORS > limit) {
  fail(
    `${largest} subscribers need about ${largest + SPARE_DESCRIPTORS} open files in this process ` +
      `and as many in the client process; the limit is ${limit}: raise it (ulimit -n ${largest * 2}) or lower the count`,
  );
}
process.stderr.write(`open-file limit ${limit}; subscribers ${counts.join(', ')}\n`);
const { runSubscribers, subscriberTable } = await import('./subscribers.js');

const started = Date.now();
const redis =
  processes === 2
    ? {
        url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        prefix: `bench-live:${randomUUID()}:`,
      }
    : undefined;
const rows = await runSubscribers(counts, intervalMs, (line) => process.stderr.write(line), {
  ...(redis ? { redis } : {}),
  ...(values['heap-snapshots'] ? { heapSnapshots: values['heap-snapshots'] } : {}),
  forms,
});
await writeFile(
  new URL('./results-live.json', import.meta.url),
  `${JSON.stringify({ date: new Date().toISOString(), node: process.version, rows }, null, 2)}\n`,
);

process.stdout.write(
  `${subscriberTable(rows)}\n` +
    `(interval ${intervalMs} ms; ${Math.round((Date.now() - started) / 1000)} s; written to bench/results-live.json)\n`,
);
