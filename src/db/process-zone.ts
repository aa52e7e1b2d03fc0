/**
 * The process runs in UTC, whatever TZ it was started with. node-oracledb Thin builds a
 * fetched DATE or TIMESTAMP from the process's local time (`new Date(y, m, d, h, …)`) and
 * writes a bound Date's local wall clock (`getHours()`); PGlite parses TIMESTAMP text as local
 * time too. The views hold UTC wall clocks. In a zone with daylight saving the wall clocks of
 * the spring-forward hour do not exist locally and come back an hour off, both ways, which no
 * conversion afterwards can undo; in UTC every wall clock exists and local time is UTC.
 *
 * Node applies a TZ set while running at once, and worker threads started afterwards inherit
 * it. Each driver calls this before it reads or writes a date (src/db/open.ts, before the
 * embedded database's worker thread starts; the Oracle driver's constructor); the image sets
 * TZ=UTC as well (Dockerfile).
 */
export function runInUtc(): void {
  if (process.env.TZ !== 'UTC') process.env.TZ = 'UTC';
}
