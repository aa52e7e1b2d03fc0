import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { LogFormat } from './config.js';

/**
 * Every error the server logs goes through `serializeError`: pino's own error serializer
 * (type, message, stack, cause and the error's own fields), then secrets removed. Errors
 * carry more than their message: an ioredis reply error keeps the command it answered
 * (`AUTH <password>`), a fetch error quotes the URL, an HTTP error may carry request headers.
 * One serializer on the `err` key (and the same text rule on logged URLs), installed by
 * createServer on whatever logger it is given, so no call site has to remember it.
 */

const REDACTED = '[redacted]';

/** Field names whose value is a secret wherever they appear in an error. */
const SECRET_KEY =
  /^(authorization|proxy-authorization|cookie|set-cookie|password|passwd|pass|secret|token|access_token|refresh_token|client_secret|api_?key)$/i;

/** Redis commands whose arguments are credentials. */
const CREDENTIAL_COMMAND = /^(auth|hello|acl|migrate|config)$/i;

/** `scheme://user:password@` → the password replaced; `Bearer <token>` → the token replaced. */
export function redactText(text: string): string {
  return text
    .replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:)[^\s/@]*@/gi, `$1${REDACTED}@`)
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g, `$1 ${REDACTED}`);
}

function redact(value: unknown, key: string, depth: number): unknown {
  if (typeof value === 'string') return SECRET_KEY.test(key) ? REDACTED : redactText(value);
  if (value === null || typeof value !== 'object' || depth > 8) return value;
  if (SECRET_KEY.test(key)) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => redact(item, '', depth + 1));
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const credentialCommand = typeof record.name === 'string' && CREDENTIAL_COMMAND.test(record.name);
  for (const [name, child] of Object.entries(record)) {
    out[name] =
      credentialCommand && name === 'args' && Array.isArray(child)
        ? child.map(() => REDACTED)
        : redact(child, name, depth + 1);
  }
  return out;
}

export function serializeError(error: unknown): unknown {
  const serialized = error instanceof Error ? pino.stdSerializers.err(error) : error;
  return redact(serialized, 'err', 0);
}

const redactUrl = (url: unknown) => (typeof url === 'string' ? redactText(url) : url);

/** Errors, and the URL fields the A2A client and the stand-in log. */
const serializers = { err: serializeError, url: redactUrl, baseUrl: redactUrl };

/**
 * Where the process logger writes (LOG_FORMAT, src/config.ts): pino-pretty's readable lines
 * for a person at a terminal, pino's JSON (its default destination, undefined here) for
 * anything that reads the logs. pino-pretty is a development dependency, loaded only when
 * wanted, in this thread and synchronously (so a line written just before an exit is not
 * lost): the image installs production dependencies only, and its logs are JSON.
 */
export async function logDestination(
  format: LogFormat,
  stdout: { isTTY?: boolean } = process.stdout,
): Promise<DestinationStream | undefined> {
  if (format === 'json' || (format === 'auto' && !stdout.isTTY)) return undefined;
  let pretty: typeof import('pino-pretty').build;
  try {
    pretty = (await import('pino-pretty')).build;
  } catch (error) {
    if (format === 'auto') return undefined;
    throw new Error(
      'LOG_FORMAT=pretty needs pino-pretty, a development dependency (npm ci without --omit=dev)',
      { cause: error },
    );
  }
  return pretty({
    sync: true,
    colorize: Boolean(stdout.isTTY),
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
  });
}

/** The process logger (main.ts), with the redacting error serializer. */
export function createLogger(options: LoggerOptions, destination?: DestinationStream): Logger {
  const configured = { ...options, serializers: { ...options.serializers, ...serializers } };
  return destination ? pino(configured, destination) : pino(configured);
}

/** `logger` with the redacting error serializer, whoever created it. */
export function withRedaction(logger: Logger): Logger {
  return logger.child({}, { serializers });
}
