/**
 * Times each abuse case against a real server over a socket and prints a Markdown table:
 * case → HTTP status / error code → median and worst time of several runs.
 *
 *   npx tsx bench/abuse.ts [runs]
 */
import { parseCommand } from '../src/command-line.js';
import type { AbuseCase } from '../test/security/abuse-cases.js';

const { positionals, fail } = parseCommand({
  name: 'npx tsx bench/abuse.ts',
  synopsis: '[runs]',
  positionals: true,
  about: `Times each abuse case against a real server over a socket and prints a Markdown table:
case, HTTP status or error code, median and worst time of [runs] runs (default 5).`,
});
const runs = Number(positionals[0] ?? 5);
if (!(Number.isInteger(runs) && runs > 0) || positionals.length > 1) {
  fail('takes at most one argument, a whole number of runs');
}
// Loaded once the command line is read: --help and a refused argument answer at once.
const [{ default: pino }, { loadConfig }, { createServer }, { ABUSE_CASES, DASHBOARD }] =
  await Promise.all([
    import('pino'),
    import('../src/config.js'),
    import('../src/server.js'),
    import('../test/security/abuse-cases.js'),
  ]);

interface Row {
  readonly name: string;
  readonly status: number;
  readonly code: string;
  readonly medianMs: number;
  readonly maxMs: number;
}

async function time(name: string, send: () => Promise<Response>): Promise<Row> {
  const times: number[] = [];
  let status = 0;
  let code = '';
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const response = await send();
    const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
    times.push(performance.now() - started);
    status = response.status;
    code = body.errors?.[0]?.extensions?.code ?? 'none (data)';
  }
  times.sort((a, b) => a - b);
  const medianMs = times[Math.floor(times.length / 2)] ?? 0;
  return { name, status, code, medianMs, maxMs: times.at(-1) ?? 0 };
}

const post = (url: string, query: string) => () =>
  fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });

async function withServer<T>(env: Record<string, string>, run: (url: string) => Promise<T>) {
  const config = loadConfig({ PORT: '0', SIMULATE: 'false', ...env });
  const server = await createServer(config, pino({ level: 'silent' }));
  const url = await server.start();
  try {
    return await run(url);
  } finally {
    await server.stop(100);
  }
}

const rows: Row[] = [];
let healthy = true;
await withServer({}, async (url) => {
  for (const abuse of ABUSE_CASES) await abuse.send(url); // warm-up: JIT, caches, sockets
  await post(url, DASHBOARD(20, 10))();
  rows.push(await time('baseline: { __typename }', post(url, '{ __typename }')));
  rows.push(await time('baseline: dashboard 20 teams × 10 runs', post(url, DASHBOARD(20, 10))));
  for (const abuse of ABUSE_CASES as AbuseCase[]) {
    rows.push(await time(abuse.name, () => abuse.send(url)));
  }
  rows.push(
    await time('text/plain POST without the CSRF header', () =>
      fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify({ query: '{ __typename }' }),
      }),
    ),
  );
  healthy = (await fetch(`${url}/health`)).status === 200;
  const after = await post(url, '{ agents(first: 1) { totalCount } }')();
  healthy &&= after.status === 200 && !('errors' in ((await after.json()) as object));
});
await withServer({ EMBEDDED_LATENCY_MS: '1000', REQUEST_TIMEOUT_MS: '200' }, async (url) => {
  rows.push(
    await time(
      'slow operation (1 s per round trip, REQUEST_TIMEOUT_MS=200)',
      post(url, '{ agents(first: 1) { totalCount } }'),
    ),
  );
});

const ms = (value: number) => `${value.toFixed(1)} ms`;
console.log(`| case | status / code | median (${runs} runs) | worst |`);
console.log('| --- | --- | --- | --- |');
for (const row of rows) {
  console.log(
    `| ${row.name} | ${row.status} ${row.code} | ${ms(row.medianMs)} | ${ms(row.maxMs)} |`,
  );
}
console.log(`\nServer healthy afterwards (/health 200 and a normal query answered): ${healthy}`);
