import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let t: TestServer;
beforeAll(async () => {
  // The drift test changes the tool catalog and reads it back at once: no catalog cache.
  t = await startTestServer({ A2A_CACHE_TTL_MS: '600000', TEAM_TOOLS_CACHE_TTL_MS: '0' });
});
afterAll(() => t.stop());

interface TeamCard {
  team: {
    name: string;
    tools: { name: string }[];
    agentCard: {
      name: string;
      skills: {
        id: string;
        name: string;
        tool: { name: string; toolId: string; instruction: string } | null;
      }[];
    };
    cardDrift: {
      kind: string;
      toolName: string | null;
      expected: string | null;
      actual: string | null;
    }[];
  };
}

const TEAM_CARD = `{ team(name: "REPORT_SUMMARY_AGENT_TEAM") {
  name tools { name }
  agentCard { name skills { id name tool { name toolId instruction } } }
  cardDrift { kind toolName expected actual } } }`;

test('each skill of a team’s card links to the catalog tool it was published from', async () => {
  const { data, errors } = await t.gql<TeamCard>(TEAM_CARD);
  expect(errors).toBeUndefined();
  const card = data?.team.agentCard;
  expect(card?.name).toBe('REPORT_SUMMARY_AGENT_TEAM');
  expect(card?.skills.map((s) => s.name)).toEqual(data?.team.tools.map((tool) => tool.name));
  for (const skill of card?.skills ?? []) {
    expect(skill.tool).toMatchObject({ name: skill.name, toolId: skill.id });
  }
  expect(data?.team.cardDrift).toEqual([]);
});

test('cardDrift shows a catalog change that the published card does not carry yet', async () => {
  await t.gql(TEAM_CARD);
  const pg = t.server.database.embedded?.pg;
  const update = (instruction: string) =>
    pg?.query(
      `UPDATE dba_ai_agent_tool_attributes SET attribute_value = $1
       WHERE tool_name = 'SUMMARIZE_REPORT' AND attribute_name = 'instruction'`,
      [instruction],
    );
  await update('Summarize reports in three bullet points');
  try {
    const { data } = await t.gql<TeamCard>(TEAM_CARD);
    expect(data?.team.cardDrift).toEqual([
      {
        kind: 'SKILL_DESCRIPTION_DIFFERS',
        toolName: 'SUMMARIZE_REPORT',
        expected: 'Summarize reports in three bullet points',
        actual: 'Summarize uploaded reports and answer follow-up questions',
      },
    ]);
    const skill = data?.team.agentCard.skills.find((s) => s.name === 'SUMMARIZE_REPORT');
    expect(skill?.tool?.instruction).toBe('Summarize reports in three bullet points');
  } finally {
    await update('Summarize uploaded reports and answer follow-up questions');
  }
});

test('every listed A2A agent links to its team', async () => {
  const { data } = await t.gql<{ a2aAgents: { name: string; team: { name: string } | null }[] }>(
    '{ a2aAgents { name team { name } } }',
  );
  expect(data?.a2aAgents.length).toBeGreaterThan(20);
  for (const listing of data?.a2aAgents ?? []) expect(listing.team?.name).toBe(listing.name);
});
