import { type Viewer, visibilityScope } from '../model/viewer.js';

/** The most reads (per viewer scope: a team's row, its tools, a page) kept; the oldest goes first. */
const MAX_ENTRIES = 10_000;

interface Entry {
  readonly value: Promise<unknown>;
  readonly readAt: number;
}

/**
 * The team catalog (the teams and each team's tools), shared across requests for at most
 * TEAM_TOOLS_CACHE_TTL_MS. The catalog changes only when a team, task or tool is created or
 * dropped (DBMS_CLOUD_AI_AGENT.CREATE_TEAM, …), yet every root over teams read it: the page
 * of `teams`, the team of `team(name:)`, and each team's tools, which unnest the team and task
 * attributes with JSON_TABLE (a sixth of a dashboard's database time when read on every
 * request). With it, an operation over teams sends only its history statements. A viewer sees
 * what its statement would return: entries are kept per scope (every owner for an
 * administrator, else the viewer's owner), as the statements' owner condition is.
 * Simultaneous requests for one entry share one read; a failed read is not kept. TTL 0 keeps
 * nothing. What it hands out is shared: nobody changes a team or a tool after reading it.
 */
export class TeamCatalogCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = MAX_ENTRIES,
  ) {}

  /** What `read` answers for `key` (a page of teams and its arguments), read when not fresh here. */
  one<T>(viewer: Viewer, key: string, read: () => Promise<T>): Promise<T> {
    return this.each(viewer, key, [''], async () => [await read()]).then(([value]) => value as T);
  }

  /**
   * Each team's value of `kind` (its row, its tools), read through `read` (one batch) for the
   * teams not fresh here.
   */
  async each<T>(
    viewer: Viewer,
    kind: string,
    teamNames: readonly string[],
    read: (teamNames: readonly string[]) => Promise<T[]>,
  ): Promise<T[]> {
    if (this.ttlMs === 0) return read(teamNames);
    const scope = `${visibilityScope(viewer)}\u0000${kind}`;
    const keyOf = (name: string) => `${scope}\u0000${name}`;
    const now = this.now();
    const missing: string[] = [];
    const values = teamNames.map((name) => {
      const entry = this.entries.get(keyOf(name));
      if (entry && now - entry.readAt < this.ttlMs) return entry.value as Promise<T>;
      missing.push(name);
      return undefined;
    });
    if (missing.length === 0) return Promise.all(values as Promise<T>[]);
    const batch = read(missing);
    const fresh = new Map(missing.map((name, i) => [name, batch.then((all) => all[i])] as const));
    for (const [name, promise] of fresh) {
      const key = keyOf(name);
      this.entries.delete(key);
      this.entries.set(key, { value: promise, readAt: now });
      promise.catch(() => {
        if (this.entries.get(key)?.value === promise) this.entries.delete(key);
      });
    }
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(key);
    }
    return Promise.all(
      values.map((known, i) => known ?? (fresh.get(teamNames[i] ?? '') as Promise<T>)),
    );
  }
}
