/**
 * The properties of a row type that a list statement must fill: those its rows' fields read,
 * plus the keys its batching needs; the other properties read null. All when undefined.
 */
export type Wanted<T> = ReadonlySet<keyof T> | undefined;

/** What a list level reads of its row type (schema/selection.ts readingOf): the properties, and a key naming that set. */
export interface Reading<T> {
  readonly wanted: Wanted<T>;
  readonly key: string;
}
