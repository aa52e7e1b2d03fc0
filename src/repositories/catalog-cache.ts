import { type Viewer, visibilityScope } from '../model/viewer.js';

/** The most reads (per viewer scope: a team's row, its tools, a page, an agent) kept; the oldest goes first. */
const MAX_ENTRIES = 10_000;

interface Entry {
  readonly value: Promise<unknown>;
  readonly readAt: number;
}

/**
 * The catalog (the teams, each team's tools, and the agents by name without DESCRIBE_AGENT),
 * shared across requests for at most TEAM_TOOLS_CACHE_TTL_MS. The catalog changes only when a
 * team, task, tool or agent is created or dropped (DBMS_CLOUD_AI_AGENT.CREATE_TEAM, …), yet
 * every root over teams read it: the page of `teams`, the team of `team(name:)`, and each
 * team's tools, which unnest the team and task attributes with JSON_TABLE (a sixth of a
 * dashboard's database time when read on every request); and the history read its back-edges,
 * a run's team and a task's agent (src/repositories/team-history.ts). With it, an operation
 * over teams sends only its history statements. A viewer sees what its statement would return:
 * entries are kept per scope (every owner for an administrator, else the viewer's owner), as
 * the statements' owner condition is. Simultaneous requests for one entry share one read; a
 * failed read is not kept. TTL 0 keeps nothing. What it hands out is shared: nobody changes a
 * team, a tool or an agent after reading it.
 */
export class CatalogCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = MAX_ENTRIES,
  ) {}

  /** Whether it keeps what it reads (a TTL above 0): else every call reads. */
  get keeps(): boolean {
    return this.ttlMs > 0;
  }

  /** What `read` answers for `key` (a page of teams and its arguments), read when not fresh here. */
  one<T>(viewer: Viewer, key: string, read: () => Promise<T>): Promise<T> {
    return this.each(viewer, key, [''], async () => [await read()]).then(([value]) => value as T);
  }

  /**
   * Each name's value of `kind` (a team's row or tools by team key, an agent by name), read
   * through `read` (one batch) for the names not fresh here.
   */
  async each<T>(
    viewer: Viewer,
    kind: string,
    names: readonly string[],
    read: (names: readonly string[]) => Promise<T[]>,
  ): Promise<T[]> {
    if (this.ttlMs === 0) return read(names);
    const scope = `${visibilityScope(viewer)}\u0000${kind}`;
    const keyOf = (name: string) => `${scope}\u0000${name}`;
    const now = this.now();
    const missing: string[] = [];
    const values = names.map((name) => {
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
      values.map((known, i) => known ?? (fresh.get(names[i] ?? '') as Promise<T>)),
    );
  }
}
