import type { Logger } from 'pino';
import type { TracingConfig } from '../config.js';
// A type-only import is erased, so the SDK is still loaded only by the import() below.
import type { Tracing } from './otel.js';

export type { Tracing };

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
