/** A stored Agent Spec (DBMS_AI_AGENT): catalog row joined with its DESCRIBE_AGENT JSON. */
export interface Agent {
  readonly agentId: number;
  readonly owner: string;
  readonly name: string;
  readonly createTime: Date | null;
  readonly description: string | null;
  readonly inputs: readonly AgentParameter[];
  readonly outputs: readonly AgentParameter[];
  readonly callContract: CallContract | null;
}

export interface AgentParameter {
  readonly title: string;
  readonly type: string | null;
}

export interface CallContract {
  readonly inputFormat: string | null;
  readonly requiredKeys: readonly string[];
  readonly nameMatches: string | null;
}
