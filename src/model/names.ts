/**
 * Names of Oracle objects are exact: an identifier created unquoted is stored in upper case
 * (report_team becomes REPORT_TEAM), a quoted one keeps its case. Lookups here never fold
 * case, so an unknown name says which stored name it probably meant.
 */

/** Oracle's limit on an identifier since 12.2: 128 bytes (not characters) of the name. */
export const ORACLE_NAME_MAX_BYTES = 128;

/**
 * Candidates compared for one suggestion. Past this many visible names, the suggestion is
 * left out rather than paid for: it is a courtesy on an error path.
 */
const MAX_SUGGESTION_CANDIDATES = 5_000;

/**
 * Edits (insert, delete, substitute) that turn `a` into `b`, or `limit` when there are at
 * least that many. Only the diagonal band |i - j| < limit can hold a cheaper path, so each
 * row computes that band alone, and a row with nothing below the limit ends the comparison.
 */
function distanceBelow(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) >= limit) return limit;
  const width = b.length + 1;
  let previous = new Array<number>(width).fill(limit);
  let current = new Array<number>(width).fill(limit);
  for (let j = 0; j < Math.min(width, limit); j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const from = Math.max(1, i - limit + 1);
    const to = Math.min(b.length, i + limit - 1);
    current.fill(limit);
    if (i < limit) current[0] = i;
    let rowMin = current[0] as number;
    for (let j = from; j <= to; j++) {
      const cost = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      current[j] = Math.min(cost, limit);
      if (cost < rowMin) rowMin = cost;
    }
    if (rowMin >= limit) return limit;
    [previous, current] = [current, previous];
  }
  return Math.min(previous[b.length] as number, limit);
}

/**
 * The candidate that `name` most likely meant: the same name in another case, else the
 * closest one within a third of its length in edits (case ignored); null when none is near.
 * Callers pass names already bounded (ORACLE_NAME_MAX_BYTES), so one comparison is at most
 * 128 × 43 steps.
 */
export function nearestName(name: string, candidates: readonly string[]): string | null {
  if (candidates.length > MAX_SUGGESTION_CANDIDATES) return null;
  const wanted = name.toUpperCase();
  let best: string | null = null;
  let bestDistance = Math.max(1, Math.floor(wanted.length / 3)) + 1;
  for (const candidate of candidates) {
    const d = distanceBelow(wanted, candidate.toUpperCase(), bestDistance);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
      if (d === 0) break;
    }
  }
  return best;
}

/** "No agent team named "x"", with the near miss when there is one. */
export function unknownTeamMessage(name: string, nearest: string | null): string {
  const hint = nearest ? `; did you mean "${nearest}"?` : '.';
  return `No agent team named "${name}"${hint} Team names are exact and case-sensitive (names created unquoted are stored in upper case).`;
}
