/**
 * Names of Oracle objects are exact: an identifier created unquoted is stored in upper case
 * (report_team becomes REPORT_TEAM), a quoted one keeps its case. Lookups here never fold
 * case, so an unknown name says which stored name it probably meant.
 */

/** Edits (insert, delete, substitute) that turn `a` into `b`. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/**
 * The candidate that `name` most likely meant: the same name in another case, else the
 * closest one within a third of its length in edits (case ignored); null when none is near.
 */
export function nearestName(name: string, candidates: readonly string[]): string | null {
  const wanted = name.toUpperCase();
  let best: string | null = null;
  let bestDistance = Math.max(1, Math.floor(wanted.length / 3)) + 1;
  for (const candidate of candidates) {
    const d = distance(wanted, candidate.toUpperCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** "No agent team named "x"", with the near miss when there is one. */
export function unknownTeamMessage(name: string, nearest: string | null): string {
  const hint = nearest ? `; did you mean "${nearest}"?` : '.';
  return `No agent team named "${name}"${hint} Team names are exact and case-sensitive (names created unquoted are stored in upper case).`;
}
