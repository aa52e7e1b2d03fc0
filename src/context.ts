import type { LiveHub } from './live/hub.js';
import type { Loaders } from './loaders.js';
import type { AgentRepository } from './repositories/agents.js';
import type { ExecStatRepository } from './repositories/exec-stats.js';
import type { TeamHistoryRepository } from './repositories/team-history.js';
import type { TeamRepository } from './repositories/teams.js';

export interface Repositories {
  readonly agents: AgentRepository;
  readonly execStats: ExecStatRepository;
  readonly teams: TeamRepository;
  readonly history: TeamHistoryRepository;
}

/**
 * What every resolver receives: one per request, and one per event of a subscription (see
 * live/per-event-context.ts), so the loaders (and the dataloaders that Pothos keys on this
 * object) never outlive the operation or event they serve.
 */
export interface Context {
  readonly requestId: string;
  readonly repositories: Repositories;
  readonly loaders: Loaders;
  /** Live subscriptions of this process. */
  readonly live: LiveHub;
}
