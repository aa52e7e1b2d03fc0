import pino from 'pino';
import { expect, test } from 'vitest';
import { startA2A } from '../../src/a2a/start.js';
import { loadConfig } from '../../src/config.js';
import { Metrics } from '../../src/metrics.js';

test('with Oracle and no A2A_BASE_URL, A2A calls fail alone, saying what to set', async () => {
  const config = loadConfig({
    ORACLE_CONNECT_STRING: 'db.example.com/pdb',
    ORACLE_USER: 'agent_graph',
    ORACLE_PASSWORD: 'secret',
  });
  const a2a = await startA2A(config, {
    logger: pino({ level: 'silent' }),
    metrics: new Metrics(),
    teams: {
      allWithTools: () => Promise.reject(new Error('the stand-in is not started with Oracle')),
    },
  });
  expect(a2a.standin).toBeUndefined();
  await expect(a2a.cards.card('ANY_TEAM')).rejects.toMatchObject({
    code: 'UPSTREAM_UNAVAILABLE',
    message: 'A2A is not configured: set A2A_BASE_URL',
  });
  await expect(a2a.cards.listAgents()).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
  await a2a.stop();
});
