/**
 * Row normalisation, in one place: Oracle's UPPER_CASE keys and PostgreSQL's lower_case keys
 * become the same camelCase record, big integers become numbers. Typed readers below turn
 * NUMBER (which PostgreSQL's numeric returns as text), CLOB, JSON and dates into JS values.
 */
import type { Row } from './driver.js';

const camelCache = new Map<string, string>();

export function camelCase(column: string): string {
  let camel = camelCache.get(column);
  if (camel === undefined) {
    camel = column.toLowerCase().replace(/[_$]+([a-z0-9])/g, (_, c: string) => c.toUpperCase());
    camelCache.set(column, camel);
  }
  return camel;
}

/** normalizeRow for rows fetched as arrays of values, in the order of `columns`. */
export function normalizeRows(columns: readonly string[], rows: readonly unknown[][]): Row[] {
  const keys = columns.map(camelCase);
  return rows.map((values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const value = values[i];
      row[keys[i] as string] = typeof value === 'bigint' ? Number(value) : value;
    }
    return row;
  });
}

export function normalizeRow(raw: Record<string, unknown>): Row {
  const row: Record<string, unknown> = {};
  for (const key in raw) {
    const value = raw[key];
    row[camelCase(key)] = typeof value === 'bigint' ? Number(value) : value;
  }
  return row;
}

export function num(value: unknown): number {
  const n = numOrNull(value);
  return n ?? 0;
}

export function numOrNull(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return value;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

/**
 * A computed figure (an average, an interpolated percentile, a ratio) to as many decimals as
 * a reader can use: 4574.003095975232 ms is 4574 ms to anyone reading it.
 */
export function roundedOrNull(value: unknown, decimals: number): number | null {
  const n = numOrNull(value);
  if (n === null) return null;
  const scale = 10 ** decimals;
  return Math.round(n * scale) / scale;
}

export function str(value: unknown): string {
  return value === null || value === undefined ? '' : String(value);
}

export function strOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

/**
 * A text column (a task's INPUT and RESULT, a tool call's INPUT, OUTPUT and TOOL_OUTPUT) as
 * its text. Where a release stores it as JSON (the JSON type, or a CLOB with an IS JSON
 * check), the SQL/JSON generation functions insert it as JSON, not as a string, so a JSON
 * list (jsonArrayQuery) hands over an object or an array: that value's JSON text, as a row
 * read without a list returns it, never "[object Object]".
 */
export function textOrNull(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** An ISO date and time without a zone: Oracle's JSON text of a DATE or TIMESTAMP. */
const ZONELESS = /^\d{4}-\d{2}-\d{2}T[\d:.]+$/;

/**
 * A Date, or the ISO text of one (JSON has no dates). Zone-less text is a UTC wall clock, the
 * catalog views' convention, whatever the process's local time (src/db/process-zone.ts).
 */
export function dateOrNull(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  let date: Date;
  if (value instanceof Date) {
    date = value;
  } else {
    const text = String(value);
    const instant = zonelessInstant(text);
    if (instant !== undefined) return new Date(instant);
    date = new Date(ZONELESS.test(text) ? `${text}Z` : text);
  }
  return Number.isNaN(date.getTime()) ? null : date;
}

/** The number the two digits at `index` of `text` write, or NaN. */
function twoDigits(text: string, index: number): number {
  const tens = text.charCodeAt(index) - 48;
  const units = text.charCodeAt(index + 1) - 48;
  return tens >= 0 && tens <= 9 && units >= 0 && units <= 9 ? tens * 10 + units : Number.NaN;
}

/**
 * The instant of the text both databases give a date in a JSON list (`2026-12-03T08:08:21`,
 * then up to nine digits of a fraction, read to the millisecond as Date's parser reads them),
 * computed from its digits: Date's own parser took most of a history list's decoding (0.55 us
 * a date against 0.23 here; runPage decodes 42). Undefined for any other text, and for a
 * field out of its range or a day the month has not, which dateOrNull leaves to Date's parser.
 */
function zonelessInstant(text: string): number | undefined {
  const length = text.length;
  if (
    length < 19 ||
    length === 20 ||
    length > 29 ||
    text.charCodeAt(4) !== 45 || // -
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 84 || // T
    text.charCodeAt(13) !== 58 || // :
    text.charCodeAt(16) !== 58
  ) {
    return undefined;
  }
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  let millisecond = 0;
  if (length > 19) {
    if (text.charCodeAt(19) !== 46) return undefined; // .
    let scale = 100;
    for (let i = 20; i < length; i++) {
      const digit = text.charCodeAt(i) - 48;
      if (!(digit >= 0 && digit <= 9)) return undefined;
      millisecond += digit * scale;
      scale /= 10;
    }
    millisecond = Math.floor(millisecond);
  }
  // NaN fails every comparison: a field that is not two digits goes to Date's parser.
  if (!(year >= 0 && month >= 1 && month <= 12 && day >= 1 && hour <= 23)) return undefined;
  if (!(minute <= 59 && second <= 59)) return undefined;
  if (day > 28 && day > daysInMonth(year, month)) return undefined;
  return (
    daysSinceEpoch(year, month, day) * 86_400_000 +
    hour * 3_600_000 +
    minute * 60_000 +
    second * 1000 +
    millisecond
  );
}

function daysInMonth(year: number, month: number): number {
  if (month !== 2) return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
}

/**
 * Days from 1970-01-01 to a date of the proleptic Gregorian calendar, as Date counts them
 * (Howard Hinnant's days_from_civil): arithmetic that Date.UTC does behind a call into the
 * runtime, and without its reading of the years 0 to 99 as 1900 to 1999.
 */
function daysSinceEpoch(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * ((month + 9) % 12) + 2) / 5) + day - 1;
  const dayOfEra =
    yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** JSON held in a CLOB (text) or already decoded by the driver; unparsable text stays text. */
export function jsonOrNull(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
