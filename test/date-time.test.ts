/** How a DateTime is answered: the instant in UTC, as Date's toISOString writes it. */
import { isScalarType } from 'graphql';
import { expect, test } from 'vitest';
import { schema } from '../src/schema/index.js';

const dateTime = schema.getType('DateTime');
if (!isScalarType(dateTime)) throw new Error('DateTime is not a scalar');
const answer = (date: Date) => dateTime.serialize(date);

test('a DateTime is answered as toISOString writes it, for every year it takes', () => {
  const first = new Date('0001-01-01T00:00:00Z').getTime();
  const last = new Date('9999-12-31T23:59:59.999Z').getTime();
  const instants = [first, last, 0, -1, Date.UTC(2000, 1, 29, 12), Date.UTC(2100, 2, 1)];
  for (let i = 0; i < 20_000; i++)
    instants.push(first + Math.floor(Math.random() * (last - first)));
  for (const instant of instants) {
    const date = new Date(instant);
    expect(answer(date)).toBe(date.toISOString());
  }
  // Outside those years (a stored date never is) and invalid, V8 writes it or throws, as before.
  expect(answer(new Date(last + 1))).toBe('+010000-01-01T00:00:00.000Z');
  expect(() => answer(new Date(Number.NaN))).toThrow(RangeError);
});
