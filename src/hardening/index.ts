import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { HttpConfig, LimitsConfig } from '../config.js';
import { documentLimits } from './document-limits.js';
import { strictUtf8Body } from './request-body.js';
import { requestTimeout } from './request-timeout.js';

export interface HardeningOptions {
  readonly limits: LimitsConfig;
  readonly http: HttpConfig;
  readonly logger: Logger;
}

/** The yoga plugins that bound what a request may cost; see docs/security-hardening.md. */
export function hardeningPlugins({ limits, logger }: HardeningOptions): Plugin[] {
  return [
    strictUtf8Body(),
    ...documentLimits(limits),
    requestTimeout(limits.requestTimeoutMs, logger),
  ];
}
