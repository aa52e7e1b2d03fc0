import { Kind } from 'graphql';
import { builder } from '../builder.js';
import { badUserInput } from '../errors.js';

function parseDate(value: unknown): Date {
  const date = typeof value === 'string' ? new Date(value) : new Date(Number.NaN);
  if (typeof value !== 'string' || Number.isNaN(date.getTime())) {
    throw badUserInput(
      `DateTime must be an ISO-8601 date-time string, got ${JSON.stringify(value)}`,
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
