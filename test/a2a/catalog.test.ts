import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { discoverCatalog } from '../../src/db/catalog.js';
import { countStatements, type Driver } from '../../src/db/driver.js';
import { type EmbeddedDatabase, openEmbeddedDatabase } from '../../src/db/embedded/database.js';
import { A2ACatalogRepository } from '../../src/repositories/a2a-catalog.js';

let db: EmbeddedDatabase;
let driver: Driver;
const statements: string[] = [];
beforeAll(async () => {
  const config = loadConfig({});
  if (config.database.kind !== 'embedded') throw new Error('the test needs the embedded database');
  db = await openEmbeddedDatabase(config.database);
  driver = countStatements(db.driver, (name) => statements.push(name));
});
afterAll(() => db.driver.close());

const repository = async (scope: 'dba' | 'user') =>
  new A2ACatalogRepository(driver, await discoverCatalog(driver, scope, 'APP_USER'));

test('every visible team with its tools in member order, in one statement', async () => {
  const catalog = await repository('dba');
  statements.length = 0;
  const { teams } = await catalog.load();
  expect(statements).toEqual(['a2aCatalog.teamsWithTools']);
  expect(teams).toHaveLength(22);
  expect(teams.find((t) => t.name === 'REPORT_SUMMARY_AGENT_TEAM')).toEqual({
    name: 'REPORT_SUMMARY_AGENT_TEAM',
    description: 'Summarizes uploaded reports and answers follow-up questions',
    tools: [
      {
        toolId: '5001',
        name: 'SUMMARIZE_REPORT',
        instruction: 'Summarize uploaded reports and answer follow-up questions',
      },
      {
        toolId: '5002',
        name: 'HUMAN_REVIEW',
        instruction: 'Ask a person to approve or correct the summary',
      },
    ],
  });
  expect(teams.find((t) => t.name === 'MOVIE_RECOMMENDER_TEAM')?.description).toBeNull();
});

test('USER_ views: the session user’s teams only', async () => {
  const { teams } = await (await repository('user')).load();
  expect(teams.map((t) => t.name)).toContain('ORDER_SUPPORT_TEAM');
  expect(teams.map((t) => t.name)).not.toContain('SALES_INSIGHT_TEAM');
  expect(teams.find((t) => t.name === 'ORDER_SUPPORT_TEAM')?.tools.map((t) => t.name)).toEqual([
    'ORDER_LOOKUP',
    'REFUND_APPROVAL',
    'NOTIFY_CUSTOMER',
  ]);
});
