import { randomUUID } from 'node:crypto';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll } from 'vitest';
import type { EmbeddedPg } from '../../src/db/embedded/database.js';
import { setRunState, startRun } from '../../src/db/embedded/simulator.js';
import { embeddedPg, wsClient } from '../live/support.js';
import { startTestServer, type TestServer } from '../support/server.js';

export const INTERVAL = 150;
export const REPORT = 'REPORT_SUMMARY_AGENT_TEAM';

export interface HitlServer {
  t: TestServer;
  pg: EmbeddedPg;
  ws: Client;
}

/**
 * Starts, before the file's tests, a server polling every INTERVAL ms with its embedded
 * database and a WebSocket client, handing them to `use`; stops them after the tests.
 */
export function withHitlServer(use: (server: HitlServer) => void): void {
  let server: HitlServer | undefined;
  beforeAll(async () => {
    const t = await startTestServer({ POLL_INTERVAL_MS: String(INTERVAL) });
    server = { t, pg: embeddedPg(t.server), ws: wsClient(t.url) };
    use(server);
  });
  afterAll(async () => {
    await server?.ws.dispose();
    await server?.t.stop();
  });
}

/** A run of the report team paused on its HUMAN_REVIEW call. */
export async function waitingRun(db: EmbeddedPg): Promise<string> {
  const execId = randomUUID().replaceAll('-', '').toUpperCase();
  await startRun(db, { owner: 'APP_USER', teamName: REPORT, execId });
  await setRunState(db, execId, 'RUNNING');
  await setRunState(db, execId, 'WAITING_FOR_HUMAN');
  return execId;
}

/**
 * Puts an answered run back to waiting on the same open HUMAN_REVIEW call, as Oracle shows it
 * until the scheduler starts the job that carries the answer.
 */
export async function stillWaiting(db: EmbeddedPg, execId: string): Promise<void> {
  await db.query(
    `UPDATE dba_ai_agent_team_history SET state = 'WAITING_FOR_HUMAN' WHERE team_exec_id = $1`,
    [execId],
  );
  await db.query(
    `UPDATE dba_ai_agent_tool_history SET end_date = NULL, output = NULL
     WHERE team_exec_id = $1 AND tool_name = 'HUMAN_REVIEW'`,
    [execId],
  );
}
