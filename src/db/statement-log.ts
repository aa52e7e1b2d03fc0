import type { SentStatement, StatementSettled } from './driver.js';

/**
 * One statement of an operation as its response shows it. The binds are named, never given:
 * a value may be a secret or another owner's data, and the log goes to a browser.
 */
export interface LoggedStatement {
  readonly name: string;
  /** The text as sent, binds written `:name`; null for the driver's own calls (ping). */
  readonly text: string | null;
  readonly binds: Readonly<Record<string, 'REDACTED'>>;
  /** From sending to the last row (or the error), in ms; null while it runs. */
  ms: number | null;
  /** Rows returned; null for a PL/SQL call or while it runs. */
  rows: number | null;
  error?: true;
}

const REDACTED = 'REDACTED' as const;

/**
 * Notes `sent` in `log` as it is sent (so the list keeps sending order) and returns the
 * callback that fills its time and rows when it settles: the counting driver's
 * StatementSettled (src/db/driver.ts).
 */
export function logStatement(log: LoggedStatement[], sent: SentStatement): StatementSettled {
  const entry: LoggedStatement = {
    name: sent.name,
    text: sent.text,
    binds: Object.fromEntries(sent.bindNames.map((name) => [name, REDACTED])),
    ms: null,
    rows: null,
  };
  log.push(entry);
  const start = performance.now();
  return (rows, failed) => {
    entry.ms = Math.round((performance.now() - start) * 100) / 100;
    entry.rows = rows;
    if (failed) entry.error = true;
  };
}
