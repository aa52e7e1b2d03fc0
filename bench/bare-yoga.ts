/**
 * `PORT=4001 npx tsx bench/bare-yoga.ts`: graphql-yoga alone — a one-field schema, no plugins,
 * no database — on node:http, the ceiling of agent-graph's `{ __typename }` floor. Load it and
 * agent-graph with the same client to see what yoga's own HTTP layer costs and what the
 * project's plugins add (docs/operations.md, Targets).
 */
import { createServer } from 'node:http';
import { parseCommand } from '../src/command-line.js';

parseCommand({
  name: 'npx tsx bench/bare-yoga.ts',
  synopsis: '',
  about: `graphql-yoga alone (a one-field schema, no plugins, no database) on node:http: the
ceiling of agent-graph's { __typename } floor, to load with the same client.`,
  environment: { PORT: 'where to listen (default 4001)' },
});
// After the command line (src/command-line.ts says why).
const { createSchema, createYoga } = await import('graphql-yoga');

const yoga = createYoga({
  schema: createSchema({ typeDefs: 'type Query { x: Int }' }),
  logging: false,
  landingPage: false,
  graphiql: false,
});
const port = Number(process.env.PORT ?? 4001);
createServer(yoga).listen(port, '127.0.0.1', () => {
  console.log(`bare yoga at http://127.0.0.1:${port}/graphql`);
});
