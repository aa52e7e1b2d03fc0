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
    date = new Date(ZONELESS.test(text) ? `${text}Z` : text);
  }
  return Number.isNaN(date.getTime()) ? null : date;
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
