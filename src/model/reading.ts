/**
 * The properties of a row type that a list statement must fill: those its rows' fields read,
 * plus the keys its batching needs; the other properties read null. All when undefined.
 */
export type Wanted<T> = ReadonlySet<keyof T> | undefined;
