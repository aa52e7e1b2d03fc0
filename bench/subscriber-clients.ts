/**
 * The client side of the subscribers scenario (bench/subscribers.ts), in a process of its
 * own so that the server's memory holds no client. Each subscriber is a graphql-ws client on
 * its own WebSocket connection, as each dashboard in a browser would be.
 *
 * Commands arrive on stdin and answers leave on stdout, one JSON object per line:
 *   {"open": N}                      → {"open": N}, once N subscribers have their first set
 *   {"watch": [ids], "present": b}   → {"watching": true}; then, once every subscriber has
 *                                      received a set in which each id's presence is b,
 *                                      {"receipts": {id: [epoch ms, one per subscriber]}}
 *   {"close": true}                  → exits
 * Receipt times are wall-clock milliseconds (performance.timeOrigin + now), the clock that
 * the bench process stamps its database writes with.
 *
 * With a third argument N (`--forms N` of bench/live.ts), subscriber i sends form i mod N of
 * FORMS: the same subscription written differently, as independent dashboards would.
 */
import { createInterface } from 'node:readline';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';

const [url = '', teamName = '', formCount = '1'] = process.argv.slice(2);
if (!url || !teamName) {
  throw new Error('usage: subscriber-clients.ts <ws url> <team name> [forms]');
}

/** Subscribers opened together: a burst of thousands would overflow the accept backlog. */
const WAVE = 250;

/** One way of writing the subscription: its text, its variables, where its exec ids are. */
interface Form {
  readonly query: string;
  readonly variables: Record<string, unknown>;
  readonly ids: (data: Record<string, unknown>) => unknown[];
}

const form = (
  query: string,
  variables: Record<string, unknown> = { team: teamName },
  root = 'teamsWaitingForHuman',
  id = 'execId',
): Form => ({
  query,
  variables,
  ids: (data) => (data[root] as Record<string, unknown>[]).map((run) => run[id]),
});

/**
 * The same data (the team's waiting runs, exec id and waiting time) asked for in ten forms:
 * operation name, field order, variable name, aliases, a named fragment, an inline fragment,
 * a literal argument, @include, and a mix of them.
 */
const FORMS: readonly Form[] = [
  form(`subscription Waiting($team: String) {
  teamsWaitingForHuman(teamName: $team) { execId waitingSince } }`),
  form(`subscription Dashboard($team: String) {
  teamsWaitingForHuman(teamName: $team) { execId waitingSince } }`),
  form(`subscription Waiting($team: String) {
  teamsWaitingForHuman(teamName: $team) { waitingSince execId } }`),
  form(
    `subscription Waiting($name: String) {
  teamsWaitingForHuman(teamName: $name) { execId waitingSince } }`,
    { name: teamName },
  ),
  form(
    `subscription Waiting($team: String) {
  waiting: teamsWaitingForHuman(teamName: $team) { id: execId since: waitingSince } }`,
    undefined,
    'waiting',
    'id',
  ),
  form(`subscription Waiting($team: String) {
  teamsWaitingForHuman(teamName: $team) { ...Run } } fragment Run on WaitingRun { execId waitingSince }`),
  form(`subscription Waiting($team: String) {
  teamsWaitingForHuman(teamName: $team) { ... on WaitingRun { execId waitingSince } } }`),
  form(
    `subscription Waiting { teamsWaitingForHuman(teamName: ${JSON.stringify(teamName)}) { execId waitingSince } }`,
    {},
  ),
  form(
    `subscription Waiting($team: String, $full: Boolean!) {
  teamsWaitingForHuman(teamName: $team) { execId waitingSince @include(if: $full) } }`,
    { team: teamName, full: true },
  ),
  form(
    `subscription Queue($t: String) { runs: teamsWaitingForHuman(teamName: $t) { ...W } }
fragment W on WaitingRun { since: waitingSince run: execId }`,
    { t: teamName },
    'runs',
    'run',
  ),
];
const forms = Number(formCount);
if (!Number.isInteger(forms) || forms < 1 || forms > FORMS.length) {
  throw new Error(`forms: 1 to ${FORMS.length}`);
}

interface Watch {
  readonly present: boolean;
  readonly receipts: Map<string, number[]>;
  left: number;
}

interface Subscriber {
  readonly client: Client;
  /** Ids still to be seen in the state the current watch waits for. */
  pending: Set<string>;
}

const subscribers: Subscriber[] = [];
/** Subscribers opened so far, whose count picks the next one's form. */
let opened = 0;
let watch: Watch | undefined;

const now = () => performance.timeOrigin + performance.now();
const reply = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);

function received(subscriber: Subscriber, ids: ReadonlySet<string>): void {
  if (!watch || subscriber.pending.size === 0) return;
  const at = now();
  for (const id of subscriber.pending) {
    if (ids.has(id) !== watch.present) continue;
    subscriber.pending.delete(id);
    watch.receipts.get(id)?.push(at);
    watch.left--;
  }
  if (watch.left === 0) {
    reply({ receipts: Object.fromEntries(watch.receipts) });
    watch = undefined;
  }
}

function open(): Promise<void> {
  return new Promise((resolve, reject) => {
    const client = createClient({
      url,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      // Keep-alive is the server's (it pings every 12 s); the client only answers.
      lazy: true,
    });
    const subscriber: Subscriber = { client, pending: new Set() };
    const { query, variables, ids } = FORMS[opened++ % forms] as Form;
    let first = true;
    client.subscribe<Record<string, unknown>>(
      { query, variables },
      {
        next: ({ data, errors }) => {
          if (errors || !data) return reject(new Error(JSON.stringify(errors)));
          received(subscriber, new Set(ids(data) as string[]));
          if (first) {
            first = false;
            subscribers.push(subscriber);
            resolve();
          }
        },
        error: (error) => (first ? reject(error) : process.stderr.write(`${String(error)}\n`)),
        complete: () => {},
      },
    );
  });
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const command = JSON.parse(line) as {
    open?: number;
    watch?: string[];
    present?: boolean;
    close?: boolean;
  };
  if (command.open !== undefined) {
    while (subscribers.length < command.open) {
      const wave = Math.min(WAVE, command.open - subscribers.length);
      await Promise.all(Array.from({ length: wave }, open));
    }
    reply({ open: subscribers.length });
  } else if (command.watch) {
    const ids = command.watch;
    watch = {
      present: command.present ?? true,
      receipts: new Map(ids.map((id) => [id, []])),
      left: ids.length * subscribers.length,
    };
    for (const subscriber of subscribers) subscriber.pending = new Set(ids);
    reply({ watching: true });
  } else if (command.close) {
    await Promise.all(subscribers.map((s) => s.client.dispose()));
    process.exit(0);
  }
}
