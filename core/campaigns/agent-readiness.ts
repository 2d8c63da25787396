import { InputError } from '../errors.js';
import type { TelephonyProviderCatalog } from '../ports/telephony-provider-catalog.port.js';
import { canTalk } from '../workflows/workflow-configurations.js';
import type { Workflow } from '../workflows/workflow.js';

/**
 * API.md 11: a call on a workflow without `llm`, `stt` and `tts` cannot talk. A carrier that brings call audio
 * (its manifest's `mediaTransport` is not `none`) therefore refuses such a workflow with 400
 * `agent_not_configured`; the simulator (no call audio: its calls are timers) still runs it. A configuration
 * whose plugin is not loaded places no call at all, so it is left to the paths that report that.
 */
export class AgentReadiness {
  constructor(private readonly carriers: Pick<TelephonyProviderCatalog, 'get'>) {}

  /** True when calls of `provider` carry audio, so the agent must be able to talk. */
  needsTalkingAgent(provider: string): boolean {
    const plugin = this.carriers.get(provider);
    return plugin !== null && plugin.manifest.mediaTransport !== 'none';
  }

  /** Throws `InputError('agent_not_configured')` when calls of `provider` need a talking agent and `workflow` is not one. Pure. */
  assertCanTakeCalls(workflow: Pick<Workflow, 'id' | 'workflowConfigurations'>, provider: string): void {
    if (!this.needsTalkingAgent(provider) || canTalk(workflow.workflowConfigurations)) return;
    throw new InputError(
      'agent_not_configured',
      `Workflow ${workflow.id} cannot talk on ${provider} calls: its workflow_configurations need llm, stt and tts services (API.md 11); only the simulator runs it without`,
    );
  }
}
