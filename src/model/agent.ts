/** A stored Agent Spec (DBMS_AI_AGENT): catalog row joined with its DESCRIBE_AGENT JSON. */
export interface Agent {
  readonly agentId: number;
  readonly owner: string;
  readonly name: string;
  readonly createTime: Date | null;
  /** DESCRIBE_AGENT's description, else the Select AI view's DESCRIPTION column. */
  readonly description: string | null;
  /** Select AI Agent shape only (STATUS, LAST_MODIFIED); null for Agent Specs. */
  readonly status: string | null;
  readonly lastModified: Date | null;
  readonly inputs: readonly AgentParameter[];
  readonly outputs: readonly AgentParameter[];
  readonly callContract: CallContract | null;
}

export interface AgentParameter {
  readonly title: string;
  readonly type: string | null;
  /** False when the declaration carries a `default` (Agent Spec): the input may be left out. */
  readonly required: boolean;
}

export interface CallContract {
  readonly inputFormat: string | null;
  readonly requiredKeys: readonly string[];
  readonly nameMatches: string | null;
}
