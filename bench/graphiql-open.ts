/**
 * `npm run bench:graphiql -- [--rounds 3] [--baseline DIR] [--trace FILE]`: how long GraphiQL
 * takes to open in Chromium (issue 36's target: under 1.5 s on a quiet machine), and where
 * the time goes. Each open navigates to /graphql in a new page and stops when the run button
 * shows. A round opens it three ways: first in a new incognito context (empty cache), then
 * again in that context (HTTP cache warm; an incognito context keeps no V8 code cache), and
 * once more in a round's own persistent profile after two earlier opens there, as a returning
 * user meets it (Chromium stores a script's compiled code from its second load, so the third
 * load skips parsing and compiling). Beside the time to the run button: the renderer's CPU
 * (its main thread, and all its threads, so the background parse and the editor's workers),
 * script, style and layout time on the main thread (Chromium's Performance metrics), and the
 * bytes received. CPU time is the steadier figure on a shared machine; wall time is what a
 * user waits. With `--baseline <checkout>`, that checkout's server is opened in the same
 * rounds, alternating, for a change's effect.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { parseCommand } from '../src/command-line.js';
import { startServer } from './server-process.js';

const { values: args, fail } = parseCommand({
  name: 'npm run bench:graphiql --',
  about: `Opens GraphiQL (/graphql) in Debian's Chromium until its run button shows: a first open
(empty cache), the next one in the same incognito context, and a third open in a persistent
profile (V8's code cache in use). For each: wall time, the renderer's CPU (main thread, all
threads), main-thread script, style and layout time, and the bytes received.`,
  options: {
    rounds: {
      type: 'string',
      default: '3',
      placeholder: 'n',
      description: 'rounds; a round opens it five times per checkout',
    },
    baseline: {
      type: 'string',
      placeholder: 'dir',
      description: "another checkout's server, opened in the same rounds, alternating",
    },
    trace: {
      type: 'string',
      placeholder: 'file',
      description: 'writes a Chromium trace of one more first open there (for DevTools)',
    },
  },
});
const ROUNDS = Number(args.rounds);
if (!(Number.isInteger(ROUNDS) && ROUNDS > 0)) fail('--rounds takes a whole number of at least 1');
// After the command line (src/command-line.ts says why).
const [{ chromium }, { CHROMIUM, CHROMIUM_ARGS, launchChromium }] = await Promise.all([
  import('playwright-core'),
  import('../test/support/browser.js'),
]);

interface Open {
  /** From navigation to the run button, as the user waits. */
  readonly ms: number;
  /** CPU of the page renderer's main thread, and of all its threads. */
  readonly mainCpu: number;
  readonly processCpu: number;
  /** Main-thread time in scripts (compiling and running), style, layout. */
  readonly script: number;
  readonly style: number;
  readonly layout: number;
  readonly bytes: number;
}

type Metrics = Record<string, number>;

/** One open of `url`/graphql in a new page of `context`, until the run button shows. */
async function open(context: BrowserContext, url: string): Promise<Open> {
  const page = await context.newPage();
  // A first visit builds the page's files; on a loaded machine that and the open exceed 30 s.
  page.setDefaultTimeout(180_000);
  const cdp = await context.newCDPSession(page);
  let bytes = 0;
  const inline = new Set<string>();
  await cdp.send('Network.enable');
  cdp.on('Network.requestWillBeSent', (event) => {
    if (event.request.url.startsWith('data:')) inline.add(event.requestId);
  });
  cdp.on('Network.loadingFinished', (event) => {
    // Fonts inlined in the style sheet as data: URLs are decoded, not received.
    if (!inline.has(event.requestId)) bytes += event.encodedDataLength;
  });
  // Thread ticks: the durations are CPU time of the main thread, not wall time.
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' });
  const metrics = async (): Promise<Metrics> =>
    Object.fromEntries(
      (await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]),
    );
  const before = await metrics();
  const started = performance.now();
  await page.goto(`${url}/graphql`);
  await page.locator('.graphiql-execute-button').waitFor();
  const ms = performance.now() - started;
  const after = await metrics();
  await page.close();
  // Cumulative per renderer process; a navigation that moved to a new process starts from 0.
  const spent = (name: string) => {
    const end = after[name] ?? 0;
    const start = before[name] ?? 0;
    return 1000 * (end >= start ? end - start : end);
  };
  return {
    ms,
    mainCpu: spent('ThreadTime'),
    processCpu: spent('ProcessTime'),
    script: spent('ScriptDuration'),
    style: spent('RecalcStyleDuration'),
    layout: spent('LayoutDuration'),
    bytes,
  };
}

/** Three opens in a new persistent profile; the third is a returning user's. */
async function returning(url: string): Promise<Open> {
  const profile = await mkdtemp(join(tmpdir(), 'graphiql-open-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: CHROMIUM_ARGS,
    viewport: { width: 1400, height: 900 },
  });
  try {
    await open(context, url);
    await open(context, url);
    return await open(context, url);
  } finally {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }
}

const KINDS = ['first', 'next', 'returning'] as const;
const checkouts: [string, string | undefined][] = [['this checkout', undefined]];
if (args.baseline) checkouts.push(['baseline', args.baseline]);

const servers = await Promise.all(
  checkouts.map(([, cwd]) => startServer({}, { readySeconds: 180, ...(cwd ? { cwd } : {}) })),
);
const browser = await launchChromium();
const results = checkouts.map(() => ({
  first: [] as Open[],
  next: [] as Open[],
  returning: [] as Open[],
}));
const loads: number[] = [];
try {
  // A warm-up open per server: each builds its page and compresses its files on a first visit.
  for (const { url } of servers) {
    const context = await browser.newContext();
    await open(context, url);
    await context.close();
  }
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which checkout goes first, so neither always meets the same moment.
    const order = checkouts.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const index of order) {
      const server = servers[index];
      const result = results[index];
      if (!server || !result) continue;
      loads.push(loadavg()[0] ?? 0);
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      result.first.push(await open(context, server.url));
      result.next.push(await open(context, server.url));
      await context.close();
      result.returning.push(await returning(server.url));
    }
  }
  if (args.trace && servers[0]) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    // Without disabled-by-default-devtools.timeline: its stack traces make V8 collect source
    // positions for the whole bundle, seconds that a user's open does not spend.
    await browser.startTracing(page, { categories: ['devtools.timeline', 'v8', 'loading'] });
    await page.goto(`${servers[0].url}/graphql`);
    await page.locator('.graphiql-execute-button').waitFor();
    await writeFile(args.trace, await browser.stopTracing());
    await context.close();
  }
} finally {
  await browser.close();
  for (const { child } of servers) child.kill();
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};
const ms = (n: number) => `${Math.round(n)}`;
console.log(
  `load average during the rounds: ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}; ${ROUNDS} rounds; milliseconds, medians [all values]`,
);
checkouts.forEach(([name], index) => {
  console.log(`\n${name}`);
  for (const kind of KINDS) {
    const opens = results[index]?.[kind] ?? [];
    const column = (pick: (o: Open) => number) =>
      `${ms(median(opens.map(pick)))} [${opens.map((o) => ms(pick(o))).join(' ')}]`;
    console.log(
      `  ${kind.padEnd(9)} to run button ${column((o) => o.ms)}; main-thread CPU ${column((o) => o.mainCpu)}; renderer CPU ${column((o) => o.processCpu)}`,
    );
    console.log(
      `  ${''.padEnd(9)} script ${ms(median(opens.map((o) => o.script)))}, style ${ms(median(opens.map((o) => o.style)))}, layout ${ms(median(opens.map((o) => o.layout)))}; ${Math.round(median(opens.map((o) => o.bytes)) / 1000)} KB received`,
    );
  }
});
if (args.trace) console.log(`\ntrace of a first open: ${args.trace}`);
