import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestServer, type TestServer } from './support/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

describe('agent(name:)', () => {
  test('returns the stored spec with the values DESCRIBE_AGENT returns (seed 000)', async () => {
    const { data, errors } = await t.gql(`{
      agent(name: "ORDER_REQUEST_FLOW") {
        name agentId owner createTime description
        inputs { title type } outputs { title type }
        callContract { inputFormat requiredKeys nameMatches }
      }
    }`);
    expect(errors).toBeUndefined();
    expect(data?.agent).toEqual({
      name: 'ORDER_REQUEST_FLOW',
      agentId: '1001',
      owner: 'APP_USER',
      createTime: '2026-08-20T12:34:56.000Z',
      description: null,
      inputs: [{ title: 'order_id', type: 'string' }],
      outputs: [{ title: 'order_id', type: 'string' }],
      callContract: {
        inputFormat: 'json_array_name_value_pairs',
        requiredKeys: ['name', 'value'],
        nameMatches: 'inputs[].title (exact match)',
      },
    });
  });

  test('costs one round trip', async () => {
    const count = await t.countStatements(() =>
      t.gql(
        '{ agent(name: "ORDER_ASSISTANT") { name agentId description callContract { inputFormat } } }',
      ),
    );
    expect(count).toBe(1);
  });

  test('an unknown name is NOT_FOUND, naming the agent', async () => {
    const { data, errors } = await t.gql('{ agent(name: "NO_SUCH_AGENT") { name } }');
    expect(data?.agent).toBeNull();
    expect(errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(errors?.[0]?.message).toContain('NO_SUCH_AGENT');
  });
});
