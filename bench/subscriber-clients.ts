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
 */
import { createInterface } from 'node:readline';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';

const [url = '', teamName = ''] = process.argv.slice(2);
if (!url || !teamName) throw new Error('usage: subscriber-clients.ts <ws url> <team name>');

/** Subscribers opened together: a burst of thousands would overflow the accept backlog. */
const WAVE = 250;
const QUERY = `subscription Waiting($team: String) {
  teamsWaitingForHuman(teamName: $team) { execId waitingSince } }`;

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
    let first = true;
    client.subscribe<{ teamsWaitingForHuman: { execId: string }[] }>(
      { query: QUERY, variables: { team: teamName } },
      {
        next: ({ data, errors }) => {
          if (errors) return reject(new Error(JSON.stringify(errors)));
          received(subscriber, new Set(data?.teamsWaitingForHuman.map((run) => run.execId)));
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
