/**
 * `npm run bench:cpu -- [--only dashboard,floor] [--requests 200] [--rounds 2] [--baseline DIR]`:
 * the CPU one request costs, per thread of the server process: the serving thread, the
 * busiest other thread (the embedded database's worker unless EMBEDDED_WORKER=false) and the
 * rest (V8's garbage-collection and compiler helpers, libuv). Read from
 * /proc/<pid>/task/<tid>/stat (Linux) around `--requests` sequential requests after 30
 * warm-ups. CPU time of sequential requests, unlike req/s, stays steady on a shared machine.
 * With `--baseline <checkout>`, that checkout's server is measured in the same rounds,
 * alternating, for a change's effect. Servers run as bench/server-process.ts starts them.
 */
import { parseCommand } from '../src/command-line.js';
import { SCENARIOS } from './scenarios.js';
import { startServer } from './server-process.js';
import { shareOf, threadCpu } from './thread-cpu.js';

const { values: args, fail } = parseCommand({
  name: 'npm run bench:cpu --',
  about: `The CPU one request costs, per thread of the server process (the serving thread, the
busiest other one, the rest), read from /proc around sequential requests after 30 warm-ups:
steadier than req/s on a shared machine.`,
  options: {
    only: {
      type: 'string',
      placeholder: 'a,b',
      description: `scenarios to measure (${SCENARIOS.map((s) => s.name).join(', ')}); all but lookup by default`,
    },
    requests: {
      type: 'string',
      default: '200',
      placeholder: 'n',
      description: 'requests per round',
    },
    rounds: { type: 'string', default: '2', placeholder: 'n', description: 'rounds' },
    baseline: {
      type: 'string',
      placeholder: 'dir',
      description: "another checkout's server, measured in the same rounds, alternating",
    },
  },
});
const REQUESTS = Number(args.requests);
const ROUNDS = Number(args.rounds);
if (!(Number.isInteger(REQUESTS) && REQUESTS > 0 && Number.isInteger(ROUNDS) && ROUNDS > 0)) {
  fail('--requests and --rounds take whole numbers of at least 1');
}
const WARM_UP = 30;
const only = args.only?.split(',');
const scenarios = SCENARIOS.filter((s) => (only ? only.includes(s.name) : s.name !== 'lookup'));
const checkouts: [string, string | undefined][] = [['this checkout', undefined]];
const baseline = args.baseline;
if (baseline) checkouts.push(['baseline', baseline]);

interface Measure {
  serving: number;
  busiestOther: number;
  rest: number;
}

async function measure(directory: string | undefined, query: string): Promise<Measure> {
  const { url, child } = await startServer({}, directory ? { cwd: directory } : {});
  const pid = child.pid ?? 0;
  const body = JSON.stringify({ query });
  const post = async () => {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const text = await response.text();
    if (!response.ok || text.includes('"errors"')) throw new Error(text.slice(0, 300));
  };
  try {
    for (let i = 0; i < WARM_UP; i++) await post();
    const before = threadCpu(pid);
    for (let i = 0; i < REQUESTS; i++) await post();
    const after = threadCpu(pid);
    const { main, busiestOther, rest } = shareOf(pid, before, after, REQUESTS);
    return { serving: main, busiestOther, rest };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

const ms = (value: number) => value.toFixed(1);
console.log(
  '| scenario | server | round | serving thread ms | busiest other thread ms | rest ms | total ms |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const scenario of scenarios) {
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 === 1 ? checkouts : [...checkouts].reverse();
    for (const [label, directory] of order) {
      const m = await measure(directory, scenario.query);
      const total = m.serving + m.busiestOther + m.rest;
      console.log(
        `| ${scenario.name} | ${label} | ${round} | ${ms(m.serving)} | ${ms(m.busiestOther)} | ${ms(m.rest)} | ${ms(total)} |`,
      );
    }
  }
}
