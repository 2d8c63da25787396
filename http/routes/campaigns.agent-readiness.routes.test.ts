import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TelephonyProvider } from '../../core/ports/telephony-provider.port.js';
import { BUILT_IN_PROVIDER_PLUGINS } from '../../plugins/provider-registry.builtins.js';
import { ProviderRegistry } from '../../plugins/provider-registry.js';
import { defineProviderPlugin } from '../../plugins/sdk.js';
import { apiClient, createSimulatorConfig, createWorkflow, csvOf, uploadCsv } from '../../test/e2e/campaign-support.js';
import { startTestService, type Credentials, type TestService } from '../../test/support/test-service.js';

/** A carrier that brings call audio (mediaTransport websocket) and accepts every call without dialing anyone. */
const talkline = defineProviderPlugin({
  manifest: {
    id: 'talkline', displayName: 'Talkline (test carrier)', docsUrl: 'https://example.com', mediaTransport: 'websocket',
    fields: [{ name: 'account', label: 'Account', type: 'string', required: true, sensitive: false, description: '', placeholder: '' }],
  },
  deriveAccountId: (c) => String(c.account),
  create: () => ({
    placeCall: async (r: { attemptKey: string }) => ({ providerCallId: `tl-${r.attemptKey}`, alreadyPlaced: false }),
    hangup: async () => undefined,
    getCallStatus: async () => null,
    syncInboundWebhook: async () => ({ ok: true, message: 'ok' }),
    checkCredentials: async () => ({ ok: true, message: 'ok' }),
    verifyWebhook: () => false,
    parseStatusCallback: () => ({ kind: 'ignored', reason: 'test' }),
    close: async () => undefined,
  }) as unknown as TelephonyProvider,
});

describe('starting a campaign needs an agent that can talk on a real carrier (API.md 11: 400 agent_not_configured)', () => {
  let svc: TestService;
  let auth: Credentials;
  beforeAll(async () => {
    svc = await startTestService({ providers: ProviderRegistry.builtIn({ allowPrivateNetwork: true }, [...BUILT_IN_PROVIDER_PLUGINS, talkline]) });
    auth = { token: (await svc.signup()).token };
  });
  afterAll(async () => {
    await svc.close();
  });

  const campaign = async (workflowId: number, configurationId: number) => {
    const api = apiClient(svc.url);
    const file = await uploadCsv(api, auth, csvOf(1));
    const r = await svc.post('/campaign/create', {
      name: `c${Math.random()}`, workflow_id: workflowId, source_type: 'csv', source_id: file, telephony_configuration_id: configurationId,
    }, auth);
    expect(r.status).toBe(200);
    return r.body.id as number;
  };

  it('refuses a workflow without llm/stt/tts on a carrier with call audio, leaving the campaign a draft; starts it once configured', async () => {
    const api = apiClient(svc.url);
    const workflowId = await createWorkflow(api, auth, 'Silent agent');
    const cfg = await svc.post('/organizations/telephony-configs', { name: 'Talkline', config: { provider: 'talkline', account: 'acc-1' } }, auth);
    expect(cfg.status).toBe(200);
    const id = await campaign(workflowId, cfg.body.id);

    const refused = await svc.post(`/campaign/${id}/start`, {}, auth);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ detail: expect.stringContaining('llm, stt and tts'), code: 'agent_not_configured' });
    expect((await svc.get(`/campaign/${id}`, auth)).body.state).toBe('draft');

    const service = async (config: Record<string, unknown>) => (await svc.post('/organizations/ai-services', { name: `s${Math.random()}`, config }, auth)).body.id;
    const llm = await service({ provider: 'openai' });
    const dg = await service({ provider: 'deepgram', api_key: 'k' });
    const put = await svc.put(`/workflow/${workflowId}`, {
      workflow_configurations: { llm: { service_id: llm, model: 'gpt-4o-mini' }, stt: { service_id: dg }, tts: { service_id: dg } },
    }, auth);
    expect(put.status).toBe(200);
    const started = await svc.post(`/campaign/${id}/start`, {}, auth);
    expect(started.status).toBe(200);
    expect(started.body.state).toBe('running');
    await svc.post(`/campaign/${id}/cancel`, {}, auth);
  });

  it('the simulator still runs a workflow without them', async () => {
    const api = apiClient(svc.url);
    const workflowId = await createWorkflow(api, auth, 'Timer agent');
    const sim = await createSimulatorConfig(api, auth, { name: 'Sim', isDefault: false, ringMs: 0, talkMs: 0 });
    const id = await campaign(workflowId, sim);
    const started = await svc.post(`/campaign/${id}/start`, {}, auth);
    expect(started.status).toBe(200);
    await svc.post(`/campaign/${id}/cancel`, {}, auth);
  });
});
