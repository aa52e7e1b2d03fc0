import type { TeamTool } from '../model/team.js';
import type { Viewer } from '../model/viewer.js';

/** The most teams (per viewer scope) whose tools are kept; the oldest read goes first. */
const MAX_TEAMS = 10_000;

interface Entry {
  readonly tools: Promise<TeamTool[]>;
  readonly readAt: number;
}

/**
 * Each team's tools, shared across requests for at most TEAM_TOOLS_CACHE_TTL_MS. The team →
 * task → tool catalog changes only when a team, task or tool is created or dropped
 * (DBMS_CLOUD_AI_AGENT.CREATE_TEAM, …), yet reading it unnests the team and task attributes
 * with JSON_TABLE, a sixth of a dashboard's database time when done on every request. A
 * viewer sees the tools its statement would return: entries are kept per scope (every owner
 * for an administrator, else the viewer's owner), as the statement's owner condition is.
 * Simultaneous requests for a team share one read; a failed read is not kept. TTL 0 keeps
 * nothing.
 */
export class TeamToolsCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxTeams = MAX_TEAMS,
  ) {}

  /** The tools of each team, read through `read` (one batch) for those not fresh here. */
  async toolsOf(
    viewer: Viewer,
    teamNames: readonly string[],
    read: (teamNames: readonly string[]) => Promise<TeamTool[][]>,
  ): Promise<TeamTool[][]> {
    if (this.ttlMs === 0) return read(teamNames);
    const scope = viewer.admin ? '*' : `owner:${viewer.owner ?? ''}`;
    const keyOf = (name: string) => `${scope}\u0000${name}`;
    const now = this.now();
    const missing: string[] = [];
    const tools = teamNames.map((name) => {
      const entry = this.entries.get(keyOf(name));
      if (entry && now - entry.readAt < this.ttlMs) return entry.tools;
      missing.push(name);
      return undefined;
    });
    if (missing.length > 0) {
      const batch = read(missing);
      const fresh = new Map(
        missing.map((name, i) => [name, batch.then((all) => all[i] ?? [])] as const),
      );
      for (const [name, promise] of fresh) {
        const key = keyOf(name);
        this.entries.delete(key);
        this.entries.set(key, { tools: promise, readAt: now });
        promise.catch(() => {
          if (this.entries.get(key)?.tools === promise) this.entries.delete(key);
        });
      }
      for (const key of this.entries.keys()) {
        if (this.entries.size <= this.maxTeams) break;
        this.entries.delete(key);
      }
      return Promise.all(tools.map((known, i) => known ?? fresh.get(teamNames[i] ?? '') ?? []));
    }
    return Promise.all(tools as Promise<TeamTool[]>[]);
  }
}
