import {
  Counter,
  type CounterConfiguration,
  collectDefaultMetrics,
  Gauge,
  type GaugeConfiguration,
  Histogram,
  type HistogramConfiguration,
  Registry,
} from 'prom-client';
import type { PoolStatistics } from './db/driver.js';

/**
 * One registry per server instance, so that several servers in one process (tests,
 * benchmarks) keep separate counts.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly dbStatements = this.counter({
    name: 'agentgraph_db_statements_total',
    help: 'Database round trips (SQL statements and PL/SQL calls), by statement name.',
    labelNames: ['statement'] as const,
  });

  readonly dbStatementDuration = this.histogram({
    name: 'agentgraph_db_statement_duration_seconds',
    help: 'Time from sending a database round trip to having its rows (or its error), by statement name: the database work, the network, and any wait for a pool connection (Oracle) or behind earlier statements (the embedded database runs one at a time).',
    labelNames: ['statement'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  });

  readonly pollCycles = this.counter({
    name: 'agentgraph_poll_cycles_total',
    help: 'Poll cycles run by the live poller, by outcome.',
    labelNames: ['outcome'] as const,
  });

  readonly pollCycleDuration = this.histogram({
    name: 'agentgraph_poll_cycle_duration_seconds',
    help: 'Time of one live poll cycle: the poll statement, the diff and publishing its events.',
    // A cycle near the poll interval (2 s by default) delays every event by a further interval.
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  });

  readonly liveFanOutDuration = this.histogram({
    name: 'agentgraph_live_fanout_seconds',
    help: 'Time to hand one cycle message to every subscription of this process and send what it produced.',
    // The fan-out adds to every subscriber's delay; past a few hundred ms it shows in the p99.
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  });

  readonly a2aRequests = this.counter({
    name: 'agentgraph_a2a_requests_total',
    help: 'HTTP requests made to the A2A server, by outcome.',
    labelNames: ['outcome'] as const,
  });

  readonly a2aCache = this.counter({
    name: 'agentgraph_a2a_cache_total',
    help: 'A2A list and card look-ups by cache result: hit (no request), revalidated (304), miss.',
    labelNames: ['result'] as const,
  });

  readonly responseCache = this.counter({
    name: 'agentgraph_response_cache_total',
    help: 'Query executions by response cache result (RESPONSE_CACHE_TTL_MS): hit (served without the database), miss, or unavailable (the look-up failed: Redis down or stalled; the query ran uncached).',
    labelNames: ['result'] as const,
  });

  readonly responseCacheErrors = this.counter({
    name: 'agentgraph_response_cache_errors_total',
    help: 'Response cache operations that failed (Redis down, stalled or refusing), by operation: get (the query ran uncached), set (the answer was not kept), invalidate (evicting changed entities failed; their answers expire within their TTL).',
    labelNames: ['operation'] as const,
  });

  readonly responseCacheBytes = this.gauge({
    name: 'agentgraph_response_cache_bytes',
    help: 'Bytes of JSON the in-memory response cache holds (at most RESPONSE_CACHE_MAX_BYTES); 0 with Redis.',
  });

  readonly activeSubscriptions = this.gauge({
    name: 'agentgraph_active_subscriptions',
    help: 'GraphQL subscriptions currently open.',
  });

  readonly liveQueries = this.gauge({
    name: 'agentgraph_live_queries',
    help: 'Live queries (@live) currently open.',
  });

  readonly liveQueryFlushes = this.counter({
    name: 'agentgraph_live_query_flushes_total',
    help: 'Invalidations handed to the live queries, by what made them: a poll cycle or an action.',
    labelNames: ['source'] as const,
  });

  readonly humanResponses = this.counter({
    name: 'agentgraph_human_responses_total',
    help: 'respondToHuman calls, by outcome: submitted, conflict, forbidden, not_found, bad_input, error.',
    labelNames: ['outcome'] as const,
  });

  readonly agentExecutions = this.counter({
    name: 'agentgraph_agent_executions_total',
    help: 'executeAgent calls, by outcome: succeeded, bad_input, forbidden, not_found, timeout, cancelled, error.',
    labelNames: ['outcome'] as const,
  });

  readonly errors = this.counter({
    name: 'agentgraph_graphql_errors_total',
    help: 'GraphQL errors returned to clients, by code.',
    labelNames: ['code'] as const,
  });

  readonly requests = this.counter({
    name: 'agentgraph_requests_total',
    help: 'GraphQL operations served, by operation name and outcome (ok, or the first error code).',
    labelNames: ['operation', 'outcome'] as const,
  });

  readonly subscriptionEvents = this.counter({
    name: 'agentgraph_subscription_events_total',
    help: 'Subscription events executed, once per group of identical subscriptions and viewer scope, by operation name and outcome (ok, or the first error code).',
    labelNames: ['operation', 'outcome'] as const,
  });

  readonly authFailures = this.counter({
    name: 'agentgraph_auth_failures_total',
    help: 'Callers refused with UNAUTHENTICATED (HTTP 401, WebSocket close 4401), by transport and reason.',
    labelNames: ['transport', 'reason'] as const,
  });

  readonly rateLimited = this.counter({
    name: 'agentgraph_rate_limited_total',
    help: 'Operations refused by the per-identity rate limit (RATE_LIMIT_*), by kind: request or subscription.',
    labelNames: ['kind'] as const,
  });

  readonly requestDuration = this.histogram({
    name: 'agentgraph_request_duration_seconds',
    help: 'Time from receiving a GraphQL request to sending its response, by operation name.',
    labelNames: ['operation'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** Pool gauges, read from the driver on every scrape (the embedded database has no pool). */
  observeDatabasePool(read: () => PoolStatistics | null): void {
    this.gauge({
      name: 'agentgraph_db_pool_connections',
      help: 'Database pool connections, by state: open, or in_use by a call.',
      labelNames: ['state'] as const,
      collect() {
        const statistics = read();
        if (!statistics) return;
        this.set({ state: 'open' }, statistics.connectionsOpen);
        this.set({ state: 'in_use' }, statistics.connectionsInUse);
      },
    });
    this.gauge({
      name: 'agentgraph_db_pool_queue_length',
      help: 'Requests waiting for a database connection because the pool is at its maximum.',
      collect() {
        const statistics = read();
        if (statistics) this.set(statistics.queueLength);
      },
    });
    this.counter({
      name: 'agentgraph_db_pool_queue_timeouts_total',
      help: 'Requests that gave up waiting for a database connection (DB_QUEUE_TIMEOUT_MS).',
      collect() {
        const statistics = read();
        if (!statistics) return;
        // The pool keeps the running total; the counter mirrors it.
        this.reset();
        this.inc(statistics.queueTimeouts);
      },
    });
  }

  // One way to declare a metric: prom-client's own, in this instance's registry only (never
  // the global one, which several servers in one process would share).
  private counter<T extends string>(config: Omit<CounterConfiguration<T>, 'registers'>) {
    return new Counter<T>({ ...config, registers: [this.registry] });
  }

  private gauge<T extends string>(config: Omit<GaugeConfiguration<T>, 'registers'>) {
    return new Gauge<T>({ ...config, registers: [this.registry] });
  }

  private histogram<T extends string>(config: Omit<HistogramConfiguration<T>, 'registers'>) {
    return new Histogram<T>({ ...config, registers: [this.registry] });
  }

  /** Statements issued so far, summed over statement names. */
  async statementCount(): Promise<number> {
    const metric = await this.dbStatements.get();
    return metric.values.reduce((sum, v) => sum + v.value, 0);
  }
}
