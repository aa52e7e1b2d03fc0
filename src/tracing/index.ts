import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { TracingConfig } from '../config.js';
import type { Context } from '../context.js';
import type { Driver } from '../db/driver.js';

/** OpenTelemetry tracing, present only when OTEL_EXPORTER_OTLP_ENDPOINT is set. */
export interface Tracing {
  /** The driver with one span per round trip, named after the statement. */
  traceDriver(driver: Driver): Driver;
  /** One span per GraphQL operation; the statements it runs are its children. */
  readonly plugin: Plugin<Context>;
  /** Sends the spans not yet exported; the server calls it last when it stops. */
  shutdown(): Promise<void>;
}

/**
 * Undefined when no endpoint is configured. The OpenTelemetry SDK is imported only here,
 * on demand, so that a server without tracing neither loads it nor wraps anything.
 */
export async function startTracing(
  config: TracingConfig,
  logger: Logger,
): Promise<Tracing | undefined> {
  if (config.endpoint === undefined) return undefined;
  const { createTracing } = await import('./otel.js');
  return createTracing({ endpoint: config.endpoint, serviceName: config.serviceName, logger });
}
