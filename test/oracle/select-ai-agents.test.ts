/**
 * The Select AI Agent shape of USER_/DBA_AI_AGENTS (DESCRIPTION, CREATED, LAST_MODIFIED,
 * STATUS; reference, "Two families of agent objects"), which a real database may expose
 * instead of the Agent Spec shape: discovered at start-up and read, description included.
 * The embedded database's DBA_AI_AGENTS is replaced by a view of that shape.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { discoverCatalog } from '../../src/db/catalog.js';
import { type EmbeddedDatabase, openEmbeddedDatabase } from '../../src/db/embedded/database.js';
import { ANONYMOUS_ADMIN } from '../../src/model/viewer.js';
import { AgentRepository } from '../../src/repositories/agents.js';

let database: EmbeddedDatabase;

beforeAll(async () => {
  const config = loadConfig({});
  if (config.database.kind !== 'embedded') throw new Error('expected the embedded config');
  database = await openEmbeddedDatabase(config.database);
  // Names DESCRIBE_AGENT does not know, so every description comes from the view's column.
  await database.pg.exec(`
    DROP VIEW dba_ai_agents;
    CREATE VIEW dba_ai_agents AS
      SELECT owner, 'SAI_' || agent_name AS agent_name,
             'Select AI agent ' || agent_name AS description,
             create_time AS created, create_time + interval '1 day' AS last_modified,
             CASE WHEN agent_id % 2 = 0 THEN 'ENABLED' ELSE 'DISABLED' END AS status
      FROM emb_agent_specs`);
});
afterAll(() => database?.driver.close());

test('agents of the Select AI shape carry the view’s DESCRIPTION, CREATED, LAST_MODIFIED and STATUS', async () => {
  const catalog = await discoverCatalog(database.driver, 'dba', 'APP_USER');
  expect([...(catalog.agents.columns ?? [])].sort()).toEqual([
    'AGENT_NAME',
    'CREATED',
    'DESCRIPTION',
    'LAST_MODIFIED',
    'OWNER',
    'STATUS',
  ]);
  const { rows: specs } = await database.pg.query<{
    owner: string;
    agent_name: string;
    agent_id: string;
    create_time: Date;
  }>(
    'SELECT owner, agent_name, agent_id, create_time FROM emb_agent_specs ORDER BY owner, agent_name',
  );
  const repository = new AgentRepository(database.driver, catalog, ANONYMOUS_ADMIN);
  const page = await repository.page(0, 100);
  expect(page.totalCount).toBe(specs.length);
  expect(
    page.items.map(({ owner, name, description, status, createTime, lastModified }) => ({
      owner,
      name,
      description,
      status,
      createTime,
      lastModified,
    })),
  ).toEqual(
    specs.map((spec) => ({
      owner: spec.owner,
      name: `SAI_${spec.agent_name}`,
      description: `Select AI agent ${spec.agent_name}`,
      status: Number(spec.agent_id) % 2 === 0 ? 'ENABLED' : 'DISABLED',
      createTime: spec.create_time,
      lastModified: new Date(spec.create_time.getTime() + 86_400_000),
    })),
  );
  const [one] = await repository.byNames([`SAI_${specs[0]?.agent_name}`]);
  expect(one?.description).toBe(`Select AI agent ${specs[0]?.agent_name}`);
});
