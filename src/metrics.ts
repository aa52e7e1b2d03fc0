import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';

/**
 * One registry per server instance, so that several servers in one process (tests,
 * benchmarks) keep separate counts.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly dbStatements = new Counter({
    name: 'agentgraph_db_statements_total',
    help: 'Database round trips (SQL statements and PL/SQL calls), by statement name.',
    labelNames: ['statement'] as const,
    registers: [this.registry],
  });

  readonly pollCycles = new Counter({
    name: 'agentgraph_poll_cycles_total',
    help: 'Poll cycles run by the live poller, by outcome.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly a2aRequests = new Counter({
    name: 'agentgraph_a2a_requests_total',
    help: 'HTTP requests made to the A2A server, by outcome.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly a2aCache = new Counter({
    name: 'agentgraph_a2a_cache_total',
    help: 'A2A list and card look-ups by cache result: hit (no request), revalidated (304), miss.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly activeSubscriptions = new Gauge({
    name: 'agentgraph_active_subscriptions',
    help: 'GraphQL subscriptions currently open.',
    registers: [this.registry],
  });

  readonly errors = new Counter({
    name: 'agentgraph_graphql_errors_total',
    help: 'GraphQL errors returned to clients, by code.',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** Statements issued so far, summed over statement names. */
  async statementCount(): Promise<number> {
    const metric = await this.dbStatements.get();
    return metric.values.reduce((sum, v) => sum + v.value, 0);
  }
}
