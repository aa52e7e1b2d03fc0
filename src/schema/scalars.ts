import { Kind } from 'graphql';
import { builder } from '../builder.js';
import { badUserInput } from '../errors.js';

/**
 * Years 1 to 9999 in UTC: what an Oracle TIMESTAMP holds (and PostgreSQL as well). JavaScript
 * accepts year 0 and six-digit years (`+275760-…`), which the databases refuse or misread.
 */
const FIRST_INSTANT = new Date('0001-01-01T00:00:00Z').getTime();
const LAST_INSTANT = new Date('9999-12-31T23:59:59.999Z').getTime();

/** Whether an Oracle TIMESTAMP can hold `date`: the DateTime rule, also for cursors. */
export const storableDate = (date: Date): boolean =>
  date.getTime() >= FIRST_INSTANT && date.getTime() <= LAST_INSTANT;

function parseDate(value: unknown): Date {
  const date = typeof value === 'string' ? new Date(value) : new Date(Number.NaN);
  if (typeof value !== 'string' || Number.isNaN(date.getTime())) {
    throw badUserInput(
      `DateTime must be an ISO-8601 date-time string, got ${JSON.stringify(value)}`,
    );
  }
  if (!storableDate(date)) {
    throw badUserInput(
      `DateTime must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z, got ${JSON.stringify(value)}`,
    );
  }
  return date;
}

builder.scalarType('DateTime', {
  description: 'An instant, as an ISO-8601 string in UTC (e.g. 2026-08-20T12:34:56.000Z).',
  serialize: (value) => (value instanceof Date ? value.toISOString() : String(value)),
  parseValue: parseDate,
  parseLiteral: (ast) => parseDate(ast.kind === Kind.STRING ? ast.value : undefined),
});

builder.scalarType('JSON', {
  description: 'Any JSON value, as the database stored it.',
  serialize: (value) => value,
  parseValue: (value) => value,
});
