/**
 * The scaffolding every provider's end-to-end test (providers/<id>/<id>.e2e.test.ts) shares: the running
 * service with the provider's plugin (pointed at its fake) beside the simulator, a signed-up user, the example
 * workflow, one telephony configuration, placing an outbound call through `PlaceOutboundCall` (as the campaign
 * engine does), and reading a run back. Each test keeps its own fake, signing and assertions.
 */
import { expect } from '@jest/globals';
import { PlaceOutboundCall } from '../../core/calls/place-outbound-call.use-case.js';
import type { ProviderPlugin } from '../../core/ports/telephony-provider.port.js';
import { TelephonyConfigurationRepository } from '../../core/ports/telephony-configuration.repository.port.js';
import type { Run } from '../../core/runs/run.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { ProviderRegistry } from '../../plugins/provider-registry.js';
import { startTestService, type TestService } from './test-service.js';

/** CALLPLANE_PUBLIC_URL of the service: providers sign webhooks over it. */
export const PUBLIC = 'https://cp.example.test';
/** The number outbound calls come from (the fakes own it, and a second one). */
export const BOUND = '+15550001111';
export const UNBOUND = '+15550002222';

export interface ProviderE2eOptions {
  /** The provider id runs are created with. */
  provider: string;
  /** The registry's plugins, in order (the simulator is not added: list it). */
  plugins: ProviderPlugin[];
  /** Extra service environment on top of CALLPLANE_PUBLIC_URL. */
  env?: Record<string, string>;
  /** The telephony configuration to create: its name and `config`. */
  configuration: { name: string; config: Record<string, unknown> };
}

export interface ProviderE2e {
  svc: TestService;
  auth: { token: string };
  organizationId: number;
  workflowId: number;
  configId: number;
  /** The create-configuration answer's body (for the test's own checks of the stored credentials). */
  configBody: { id: number; credentials: Record<string, unknown> };
  /** Creates an outbound run of the provider and places it through `PlaceOutboundCall`, as the campaign engine does. */
  placeOutbound(to: string, machineDetection: boolean): Promise<{ run: Run; providerCallId: string }>;
  /** The run as the API returns it. */
  runOf(runId: number): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Starts the service and creates the user, workflow (HTTP 200) and configuration (HTTP 200). Close `svc` in afterAll. */
export async function startProviderE2e(opts: ProviderE2eOptions): Promise<ProviderE2e> {
  const providers = ProviderRegistry.builtIn({ allowPrivateNetwork: true }, opts.plugins);
  const svc = await startTestService({ env: { CALLPLANE_PUBLIC_URL: PUBLIC, ...opts.env }, providers });
  const user = await svc.signup();
  const auth = { token: user.token };
  const organizationId = user.organizationId;
  const wf = await svc.post('/workflow/create/definition', { name: 'Receptionist', workflow_definition: exampleWorkflowDefinition }, auth);
  expect(wf.status).toBe(200);
  const workflowId: number = wf.body.id;
  const cfg = await svc.post('/organizations/telephony-configs', opts.configuration, auth);
  expect(cfg.status).toBe(200);
  // the provider (its fake) was asked whether the credentials work, with an authenticated read
  expect(cfg.body.credentials_check).toEqual({ ok: true, message: expect.any(String), checked_at: expect.any(String) });
  const configId: number = cfg.body.id;

  async function placeOutbound(to: string, machineDetection: boolean) {
    const configurations = svc.container.get<TelephonyConfigurationRepository>(TelephonyConfigurationRepository);
    const workflow = (await svc.get(`/workflow/${workflowId}`, auth)).body;
    const configuration = await configurations.get(organizationId, configId);
    expect(configuration?.provider).toBe(opts.provider);
    const result = await svc.container.get(PlaceOutboundCall).execute({
      configuration: configuration!, workflowId, definitionId: workflow.current_definition_id, name: `Call ${to}`, to, from: BOUND,
      initialContext: { called_number: to, caller_number: BOUND }, machineDetection, ringTimeoutSeconds: 30,
    });
    if (result.kind === 'failed') throw result.error;
    if (result.kind !== 'placed') throw new Error(`the call was not placed: ${result.kind}`);
    return { run: result.run, providerCallId: result.providerCallId };
  }

  const runOf = async (runId: number) => (await svc.get(`/workflow/${workflowId}/runs/${runId}`, auth)).body;

  return { svc, auth, organizationId, workflowId, configId, configBody: cfg.body, placeOutbound, runOf };
}
