import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { agentCardHandler } from '@a2a-js/sdk/server/express';
import express from 'express';
import { v1Card, v03Card } from './cards.js';

export const OCID = 'ocid1.autonomousdatabase.oc1..sdktest';
export const USERNAME = 'AGENT_READER';
export const PASSWORD = 'pa55-w0rd-never-shown';
/** Text a card answer carries that must not reach a client message. */
export const UPSTREAM_SECRET = 'ora-77';
const A2A_PREFIX = `/adb/a2a/v1/databases/${OCID}`;

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly ifNoneMatch: string | undefined;
  readonly authorization: string | undefined;
  status?: number;
}

export interface SdkTestServer {
  /** The A2A_BASE_URL of this server. */
  readonly baseUrl: string;
  readonly tokenUrl: string;
  /** Every request, recorded on arrival (so a request the client gave up on counts too). */
  readonly requests: RecordedRequest[];
  /** Requests for one team's card. */
  cardRequests(team: string): RecordedRequest[];
  readonly tokenRequests: () => RecordedRequest[];
  /** Tokens handed out so far, to check that none leaks into a message. */
  readonly issuedTokens: string[];
  /** The next `count` card requests of `team` answer 503. */
  failNext(team: string, count: number): void;
  /** Every issued token stops working, as if it had expired. */
  expireTokens(): void;
  stop(): Promise<void>;
}

/**
 * An A2A server on loopback built from @a2a-js/sdk's Express card handler, at Oracle's
 * paths, with one team per behaviour under test. Its token endpoint issues a new token per
 * call and its A2A paths answer 401 to anything else.
 */
export async function startSdkTestServer(
  options: { slowMs?: number } = {},
): Promise<SdkTestServer> {
  const requests: RecordedRequest[] = [];
  const issuedTokens: string[] = [];
  const validTokens = new Set<string>();
  const failures = new Map<string, number>();
  const slowMs = options.slowMs ?? 2_000;
  const app = express();

  app.use((req, res, next) => {
    const record: RecordedRequest = {
      method: req.method,
      path: req.path,
      ifNoneMatch: req.header('if-none-match'),
      authorization: req.header('authorization'),
    };
    requests.push(record);
    res.on('finish', () => {
      record.status = res.statusCode;
    });
    next();
  });

  app.post(`/adb/auth/v1/databases/${OCID}/token`, express.json(), (req, res) => {
    const body = req.body as Record<string, unknown> | undefined;
    if (body?.grant_type !== 'password') {
      res.status(400).json({ error: 'unsupported_grant_type' });
      return;
    }
    if (body.username !== USERNAME || body.password !== PASSWORD) {
      res.status(401).json({ error: 'invalid_grant' });
      return;
    }
    const token = `tok-${issuedTokens.length + 1}-${Math.random().toString(36).slice(2)}`;
    issuedTokens.push(token);
    validTokens.add(token);
    res.json({ access_token: token, token_type: 'Bearer' });
  });

  app.use(A2A_PREFIX, (req, res, next) => {
    const token = /^Bearer (.+)$/.exec(req.header('authorization') ?? '')?.[1];
    if (token && validTokens.has(token)) return next();
    res.status(401).set('www-authenticate', 'Bearer').json({ error: 'unauthorized' });
  });

  const teams = [
    'V1_TEAM',
    'LEGACY_TEAM',
    'SUPERSET_TEAM',
    'REVALIDATE_TEAM',
    'NO_STORE_TEAM',
    'BROKEN_TEAM',
    'FLAKY_TEAM',
    'SLOW_TEAM',
    'MALFORMED_TEAM',
    'INCOMPLETE_TEAM',
    'FORBIDDEN_TEAM',
    'ALWAYS_401_TEAM',
  ];
  app.get(`${A2A_PREFIX}/agents/`, (req, res) => {
    const origin = `${req.protocol}://${req.get('host')}`;
    res.json(
      teams.map((name) => ({
        agent_card_url: `${origin}${A2A_PREFIX}/agents/${name}/.well-known/agent-card.json`,
        name,
        description: name === 'LEGACY_TEAM' ? null : `${name} description`,
      })),
    );
  });

  const card = (team: string) => `${A2A_PREFIX}/agents/${team}/.well-known/agent-card.json`;
  app.use(card('FLAKY_TEAM'), (_req, res, next) => {
    const left = failures.get('FLAKY_TEAM') ?? 0;
    if (left <= 0) return next();
    failures.set('FLAKY_TEAM', left - 1);
    res.status(503).json({ error: 'busy' });
  });
  for (const team of ['V1_TEAM', 'FLAKY_TEAM']) {
    app.use(card(team), agentCardHandler({ agentCardProvider: async () => v1Card(team) }));
  }
  app.use(
    card('REVALIDATE_TEAM'),
    agentCardHandler({
      agentCardProvider: async () => v1Card('REVALIDATE_TEAM'),
      cache: { maxAge: 0 },
    }),
  );
  // The SDK's compatibility router answers 0.3 clients with a card in both shapes.
  app.use(
    card('SUPERSET_TEAM'),
    (req, _res, next) => {
      req.headers['a2a-version'] = '0.3';
      next();
    },
    agentCardHandler({
      agentCardProvider: async () => {
        const superset = v1Card('SUPERSET_TEAM');
        superset.supportedInterfaces.push({
          url: 'https://agents.example.com/SUPERSET_TEAM/v03',
          protocolBinding: 'JSONRPC',
          tenant: '',
          protocolVersion: '0.3',
        });
        return superset;
      },
      legacyCompat: { enabled: true },
    }),
  );
  app.get(card('LEGACY_TEAM'), (_req, res) => {
    res.set('cache-control', 'public, max-age=3600').json(v03Card('LEGACY_TEAM'));
  });
  app.get(card('NO_STORE_TEAM'), (_req, res) => {
    res.set('cache-control', 'no-store').json(v03Card('NO_STORE_TEAM'));
  });
  app.get(card('BROKEN_TEAM'), (_req, res) => {
    res.status(500).json({ error: 'ORA-00600: internal error code' });
  });
  app.get(card('SLOW_TEAM'), (_req, res) => {
    const timer = setTimeout(() => res.json(v03Card('SLOW_TEAM')), slowMs);
    res.on('close', () => clearTimeout(timer));
  });
  app.get(card('MALFORMED_TEAM'), (_req, res) => {
    res.type('application/json').send('{"name": "MALFORMED_TEAM", "skills": [');
  });
  app.get(card('LEAKY_TEAM'), (_req, res) => {
    res.type('application/json').send(UPSTREAM_SECRET);
  });
  // 2 MiB declared up front, and 2 MiB streamed without a length.
  app.get(card('HUGE_TEAM'), (_req, res) => {
    res.type('application/json').send(`{"name": "${'x'.repeat(2 * 1_048_576)}"}`);
  });
  app.get(card('ENDLESS_TEAM'), (_req, res) => {
    res.type('application/json');
    res.write('{"name": "');
    const chunk = 'x'.repeat(65_536);
    let sent = 0;
    const more = () => {
      while (sent < 32 && res.write(chunk)) sent++;
      if (sent < 32) res.once('drain', more);
      else res.end('"}');
    };
    more();
  });
  app.get(card('INCOMPLETE_TEAM'), (_req, res) => {
    const { version: _, supportedInterfaces: __, ...rest } = v1Card('INCOMPLETE_TEAM');
    res.json(rest);
  });
  app.get(card('FORBIDDEN_TEAM'), (_req, res) => {
    res.status(403).json({ error: 'forbidden' });
  });
  app.get(card('ALWAYS_401_TEAM'), (_req, res) => {
    res.status(401).json({ error: 'unauthorized' });
  });

  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    baseUrl: `${origin}${A2A_PREFIX}`,
    tokenUrl: `${origin}/adb/auth/v1/databases/${OCID}/token`,
    requests,
    cardRequests: (team) => requests.filter((r) => r.path === card(team)),
    tokenRequests: () => requests.filter((r) => r.path.endsWith('/token')),
    issuedTokens,
    failNext: (team, count) => {
      failures.set(team, count);
    },
    expireTokens: () => validTokens.clear(),
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
