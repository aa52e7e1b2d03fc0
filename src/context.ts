import type { A2ACards } from './a2a/client.js';
import type { AgentRepository } from './repositories/agents.js';
import type { ExecStatRepository } from './repositories/exec-stats.js';

export interface Repositories {
  readonly agents: AgentRepository;
  readonly execStats: ExecStatRepository;
  /** A2A agent list and cards, through the cross-request cache. */
  readonly a2a: A2ACards;
}

/**
 * What every resolver receives. One per request (and one per subscription event), so the
 * dataloaders that Pothos keys on this object never outlive the operation they serve.
 */
export interface Context {
  readonly requestId: string;
  readonly repositories: Repositories;
}
