/**
 * The client side of the live-query scenario (bench/live-queries.ts), in a process of its own
 * so that the delays measured are the server's: N dashboards, each a graphql-ws client on its
 * own WebSocket connection with one `@live` query, as each browser tab would be. Dashboard i
 * asks for patches when i is odd; the others receive whole answers.
 *
 * Commands arrive on stdin and answers leave on stdout, one JSON object per line:
 *   {"open": N}                       → {"open": N}, once N dashboards have their first answer
 *   {"watch": [execId, state]}        → {"watching": true}; then, once every dashboard shows
 *                                       the run in that state, {"receipts": [epoch ms, …]}
 *   {"bytes": true}                   → {"whole": mean, "patched": mean}: the bytes of the
 *                                       updates after the first answer, by kind
 *   {"close": true}                   → exits
 * Receipt times are wall-clock milliseconds (performance.timeOrigin + now), the clock that
 * the bench process stamps its database writes with.
 */
import { createInterface } from 'node:readline';
import { applyJSONDiffPatch } from '@n1ru4l/graphql-live-query-patch-jsondiffpatch';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';

const [url = '', query = ''] = process.argv.slice(2);
if (!url || !query) throw new Error('usage: live-query-clients.ts <ws url> <live query>');

/**
 * Dashboards opened together: a burst of thousands would overflow the accept backlog, and on
 * a loaded machine a wave of 250 could not all send connection_init within the server's 3 s
 * (graphql-ws closes those with 4408).
 */
const WAVE = 50;
/** Dashboards of each kind whose message sizes are recorded (every one of a kind gets the same). */
const MEASURED = 20;

interface Data {
  team: { runs: { nodes: { execId: string; state: string }[] } };
}

interface Dashboard {
  readonly client: Client;
  readonly patches: boolean;
  data: Data | undefined;
  /** The sizes of the messages after the first, when this dashboard is measured. */
  readonly bytes: number[] | undefined;
}

interface Watch {
  readonly execId: string;
  readonly state: string;
  readonly pending: Set<Dashboard>;
  readonly receipts: number[];
}

const dashboards: Dashboard[] = [];
let watch: Watch | undefined;

const now = () => performance.timeOrigin + performance.now();
const reply = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);

const shows = (dashboard: Dashboard, { execId, state }: Watch) =>
  Boolean(dashboard.data?.team.runs.nodes.some((r) => r.execId === execId && r.state === state));

function check(dashboard: Dashboard): void {
  if (!watch?.pending.has(dashboard) || !shows(dashboard, watch)) return;
  watch.receipts.push(now());
  watch.pending.delete(dashboard);
  if (watch.pending.size === 0) {
    reply({ receipts: watch.receipts });
    watch = undefined;
  }
}

function open(index: number): Promise<void> {
  const patches = index % 2 === 1;
  return new Promise((resolve, reject) => {
    const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    const measured = index < MEASURED * 2;
    const dashboard: Dashboard = {
      client,
      patches,
      data: undefined,
      bytes: measured ? [] : undefined,
    };
    let first = true;
    client.subscribe(
      { query, ...(patches ? { extensions: { liveQueryPatch: 'jsondiffpatch' } } : {}) },
      {
        next: (value) => {
          const message = value as { data?: Data; patch?: never; revision?: number; errors?: [] };
          if (message.errors) return reject(new Error(JSON.stringify(message.errors)));
          dashboard.data =
            patches && (message.revision ?? 1) > 1
              ? (applyJSONDiffPatch(dashboard.data as never, message.patch as never) as never)
              : message.data;
          check(dashboard);
          if (first) {
            first = false;
            dashboards.push(dashboard);
            resolve();
          } else {
            dashboard.bytes?.push(JSON.stringify(value).length);
          }
        },
        error: (error) => (first ? reject(error) : process.stderr.write(`${String(error)}\n`)),
        complete: () => {},
      },
    );
  });
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const command = JSON.parse(line) as {
    open?: number;
    watch?: [string, string];
    bytes?: boolean;
    close?: boolean;
  };
  if (command.open !== undefined) {
    while (dashboards.length < command.open) {
      const from = dashboards.length;
      const wave = Math.min(WAVE, command.open - from);
      await Promise.all(Array.from({ length: wave }, (_, i) => open(from + i)));
    }
    reply({ open: dashboards.length });
  } else if (command.watch) {
    const [execId, state] = command.watch;
    watch = { execId, state, pending: new Set(dashboards), receipts: [] };
    reply({ watching: true });
  } else if (command.bytes) {
    const of = (patched: boolean) =>
      mean(dashboards.filter((d) => d.patches === patched).flatMap((d) => d.bytes ?? []));
    reply({ whole: of(false), patched: of(true) });
  } else if (command.close) {
    await Promise.all(dashboards.map((d) => d.client.dispose()));
    process.exit(0);
  }
}
