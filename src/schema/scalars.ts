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

/**
 * RFC 3339's date-time, the ISO-8601 profile the description promises: a full date, hours and
 * minutes (seconds and a fraction optional; an expanded ±YYYYYY year is read, to be refused by
 * the range check with its own message), and an offset (`Z` or ±hh:mm), which an instant
 * needs. JavaScript's Date parser takes much else ("Dec 1 2026", "1" as the year 2001, a time
 * without an offset as local time) and rolls 2026-02-30 over to March 2.
 */
const DATE_TIME =
  /^([+-]\d{6}|\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const notDateTime = (value: unknown) =>
  badUserInput(
    `DateTime must be an ISO-8601 date-time string with an offset (e.g. 2026-08-20T12:34:56.000Z), got ${JSON.stringify(value)}`,
  );

function parseDate(value: unknown): Date {
  const parts = typeof value === 'string' ? DATE_TIME.exec(value) : null;
  if (!parts) throw notDateTime(value);
  const [year, month, day, hour, minute, second = 0] = parts
    .slice(1, 7)
    .map((part) => Number(part ?? 0)) as number[];
  const millisecond = Number((parts[7] ?? '0').padEnd(3, '0').slice(0, 3));
  const sign = parts[9] === '-' ? -1 : 1;
  const offsetHours = Number(parts[10] ?? 0);
  const offsetMinutes = Number(parts[11] ?? 0);
  // Not Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
  const asWritten = new Date(0);
  asWritten.setUTCFullYear(year as number, (month as number) - 1, day);
  asWritten.setUTCHours(hour as number, minute, second, 0);
  const fields = asWritten.getTime();
  // Each field in its range: Date rolls 30 February over to March, 24:00 to the next day.
  if (
    asWritten.getUTCFullYear() !== year ||
    asWritten.getUTCMonth() !== (month as number) - 1 ||
    asWritten.getUTCDate() !== day ||
    asWritten.getUTCHours() !== hour ||
    asWritten.getUTCMinutes() !== minute ||
    asWritten.getUTCSeconds() !== second ||
    offsetHours > 23 ||
    offsetMinutes > 59
  ) {
    throw notDateTime(value);
  }
  const date = new Date(
    fields + millisecond - sign * (offsetHours * 3_600_000 + offsetMinutes * 60_000),
  );
  if (!storableDate(date)) {
    throw badUserInput(
      `DateTime must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z, got ${JSON.stringify(value)}`,
    );
  }
  return date;
}

builder.scalarType('DateTime', {
  description:
    'An instant, as an ISO-8601 date-time string (RFC 3339): answered in UTC (e.g. 2026-08-20T12:34:56.000Z); taken with seconds and a fraction optional and an offset required (Z or ±hh:mm), every field in its range; BAD_USER_INPUT otherwise.',
  serialize: (value) => (value instanceof Date ? value.toISOString() : String(value)),
  parseValue: parseDate,
  parseLiteral: (ast) => parseDate(ast.kind === Kind.STRING ? ast.value : undefined),
});

builder.scalarType('JSON', {
  description: 'Any JSON value, as the database stored it.',
  serialize: (value) => value,
  parseValue: (value) => value,
});
