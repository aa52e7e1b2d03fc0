/**
 * The team catalog read as Oracle may store it: a tool_type written `human` is a HUMAN tool
 * (its waits are counted), and a team's members named in lower case in its `agents` JSON still
 * find their upper-case catalog tasks and tools. JSON_TABLE's columns are VARCHAR2, as Oracle's
 * grammar names them, and the embedded database runs that text.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { EmbeddedPg } from '../src/db/embedded/database.js';
import { embeddedPg } from './live/support.js';
import { startTestServer, type TestServer } from './support/server.js';

const REPORT = 'REPORT_SUMMARY_AGENT_TEAM';

let t: TestServer;
let pg: EmbeddedPg;
beforeAll(async () => {
  t = await startTestServer({});
  pg = embeddedPg(t.server);
});
afterAll(() => t.stop());

interface TeamAnswer {
  team: {
    stats: { humanWaitCount: number };
    tools: { name: string; toolType: string; taskName: string }[];
  };
}
const TEAM = `query($n: String!) { team(name: $n) { stats { humanWaitCount } tools { name toolType taskName } } }`;

test('a tool_type stored in lower case counts its human waits; lower-case member names find the catalog', async () => {
  const { rows } = await pg.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM dba_ai_agent_tool_history c
     JOIN dba_ai_agent_team_history h ON h.team_exec_id = c.team_exec_id
     WHERE h.team_name = $1 AND c.tool_name = 'HUMAN_REVIEW' AND c.end_date IS NOT NULL`,
    [REPORT],
  );
  const waits = rows[0]?.n as number;
  expect(waits).toBeGreaterThan(0);
  await pg.query(
    `UPDATE dba_ai_agent_tool_attributes SET attribute_value = ' human'
     WHERE owner = 'APP_USER' AND tool_name = 'HUMAN_REVIEW' AND attribute_name = 'tool_type'`,
  );
  await pg.query(
    `UPDATE dba_ai_agent_team_attributes SET attribute_value = lower(attribute_value)
     WHERE owner = 'APP_USER' AND agent_team_name = $1 AND attribute_name = 'agents'`,
    [REPORT],
  );
  await pg.query(
    `UPDATE dba_ai_agent_task_attributes SET attribute_value = lower(attribute_value)
     WHERE owner = 'APP_USER' AND task_name = 'SUMMARIZE_TASK' AND attribute_name = 'tools'`,
  );

  const { data, errors } = await t.gql<TeamAnswer>(TEAM, { n: REPORT });
  expect(errors).toBeUndefined();
  expect(data?.team.stats.humanWaitCount).toBe(waits);
  expect(data?.team.tools.map((tool) => [tool.name, tool.toolType, tool.taskName])).toEqual([
    ['SUMMARIZE_REPORT', 'RAG', 'summarize_task'],
    ['HUMAN_REVIEW', ' human', 'review_summary_task'],
  ]);
});
