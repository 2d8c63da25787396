/**
 * ARI end to end: the running service (startTestService) with an ARI configuration pointing at the fake
 * Asterisk. The configuration's WebSocket opens when it is created; events flow through the same status use
 * case as HTTP callbacks; inbound StasisStart is routed to the bound workflow.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CallUrls } from '../../core/calls/call-urls.js';
import { RunRepository } from '../../core/ports/run.repository.port.js';
import { TelephonyConfigurationRepository } from '../../core/ports/telephony-configuration.repository.port.js';
import { ProviderInstances } from '../../core/telephony/provider-instances.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { ProviderRegistry } from '../../plugins/provider-registry.js';
import simulator from '../simulator/index.js';
import twilio from '../twilio/index.js';
import { FakeAriServer } from '../../test/fakes/ari/fake-ari-server.js';
import { startTestService, type TestService } from '../../test/support/test-service.js';
import { createAriPlugin } from './index.js';
import { until } from '../../test/support/until.js';

const APP = 'callplane';
const PASSWORD = 'ari-e2e-password';

describe('ARI through the running service', () => {
  let fake: FakeAriServer;
  let svc: TestService;
  let auth: { token: string };
  let organizationId: number;
  let workflowId: number;
  let configId: number;

  const instances = () => svc.container.get<ProviderInstances>(ProviderInstances);
  const runs = () => svc.container.get<RunRepository>(RunRepository);
  const runOf = async (runId: number) => (await svc.get(`/workflow/${workflowId}/runs/${runId}`, auth)).body;
  const ariHealth = () => instances().health().find((h) => h.configurationId === configId)?.health;

  async function placeOutbound(to: string) {
    const workflow = (await svc.get(`/workflow/${workflowId}`, auth)).body;
    const run = await runs().create(organizationId, {
      workflowId, definitionId: workflow.current_definition_id, name: `Call ${to}`, mode: 'outbound', telephonyConfigurationId: configId,
      provider: 'ari', calledNumber: to, callerNumber: '1000', initialContext: { called_number: to }, now: new Date(),
    });
    const configuration = await svc.container.get<TelephonyConfigurationRepository>(TelephonyConfigurationRepository).findForProviderEvent(configId);
    const provider = instances().forConfiguration(configuration!);
    const request = {
      attemptKey: `attempt-${run.id}`, organizationId, runId: run.id, to, from: '1000',
      ...svc.container.get(CallUrls).forCall('ari', run.id), machineDetection: false, ringTimeoutSeconds: 30,
    };
    return { run, provider, request, placed: await provider.placeCall(request) };
  }

  beforeAll(async () => {
    fake = await FakeAriServer.start({ username: APP, password: PASSWORD });
    const ari = createAriPlugin({ client: { reconnect: { initialDelayMs: 20, maxDelayMs: 200, jitter: false }, pingIntervalMs: 0 } });
    svc = await startTestService({ providers: ProviderRegistry.builtIn({ allowPrivateNetwork: true }, [ari, twilio, simulator]) });
    const user = await svc.signup();
    auth = { token: user.token };
    organizationId = user.organizationId;
    workflowId = (await svc.post('/workflow/create/definition', { name: 'Front desk', workflow_definition: exampleWorkflowDefinition }, auth)).body.id;
    const cfg = await svc.post('/organizations/telephony-configs', {
      name: 'Asterisk', config: { provider: 'ari', ari_endpoint: fake.url, app_name: APP, app_password: PASSWORD, dial_template: 'PJSIP/{number}@trunk' },
    }, auth);
    expect(cfg.status).toBe(200);
    expect(cfg.body.credentials).toMatchObject({ ari_endpoint: fake.url, app_name: APP, ws_client_name: '', dial_template: 'PJSIP/{number}@trunk' });
    expect(cfg.body.credentials.app_password).not.toBe(PASSWORD);
    // the credentials check read GET /ari/asterisk/info with the application's credentials
    expect(cfg.body.credentials_check).toEqual({ ok: true, message: expect.stringContaining('accepted the ARI credentials'), checked_at: expect.any(String) });
    expect(fake.requests.filter((q) => q.path === '/ari/asterisk/info').map((q) => [q.user, q.status])).toEqual([[APP, 200]]);
    configId = cfg.body.id;
  });

  it('a wrong ARI password is saved with a failed credentials check', async () => {
    const r = await svc.post('/organizations/telephony-configs', {
      name: 'Wrong password', config: { provider: 'ari', ari_endpoint: fake.url, app_name: 'other-app', app_password: 'not-the-password' },
    }, auth);
    expect(r.status).toBe(200);
    expect(r.body.credentials_check).toMatchObject({ ok: false, message: 'Asterisk ARI rejected the username or password' });
    expect((await svc.delete(`/organizations/telephony-configs/${r.body.id}`, auth)).status).toBe(200);
  });
  afterAll(async () => {
    await svc?.close();
    await fake?.close();
  });

  it('opens the configuration\'s ARI WebSocket at once and reports its health', async () => {
    await until('socket', () => fake.connectedApps.some((apps) => apps.includes(APP)));
    await until('healthy', () => ariHealth()?.ok === true);
    expect(fake.connectedApps.filter((apps) => apps.includes(APP))).toHaveLength(1);
  });

  it('refuses an endpoint pointing at cloud metadata (422)', async () => {
    const r = await svc.post('/organizations/telephony-configs', {
      name: 'Bad', config: { provider: 'ari', ari_endpoint: 'http://169.254.169.254', app_name: APP, app_password: 'x' },
    }, auth);
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body)).toContain('metadata');
  });

  it('binding an extension has nothing to push to Asterisk', async () => {
    const r = await svc.post(`/organizations/telephony-configs/${configId}/phone-numbers`, { address: '1000', inbound_workflow_id: workflowId }, auth);
    expect(r.status).toBe(200);
    expect(r.body.provider_sync).toMatchObject({ ok: true, message: expect.stringContaining(`Stasis(${APP})`) });
  });

  it('originates with the attempt key as channelId; re-placing the attempt dials nothing; events move the run', async () => {
    const { run, provider, request, placed } = await placeOutbound('+15557654321');
    expect(placed).toEqual({ providerCallId: `attempt-${run.id}`, alreadyPlaced: false });
    expect(fake.channels.get(`attempt-${run.id}`)?.endpoint).toBe('PJSIP/+15557654321@trunk');
    await expect(provider.placeCall(request)).resolves.toEqual({ providerCallId: `attempt-${run.id}`, alreadyPlaced: true });
    expect(fake.requests.filter((q) => q.method === 'POST' && q.query.channelId === `attempt-${run.id}`).map((q) => q.status)).toEqual([200, 409]);

    fake.simulateRinging(`attempt-${run.id}`);
    await until('ringing', async () => (await runOf(run.id)).status === 'ringing');
    fake.simulateAnswer(`attempt-${run.id}`);
    await until('in progress', async () => (await runOf(run.id)).status === 'in_progress');
    fake.simulateHangup(`attempt-${run.id}`, 16);
    await until('completed', async () => (await runOf(run.id)).status === 'completed');
    expect(await runOf(run.id)).toMatchObject({ status: 'completed', disposition: 'completed' });
  });

  it('maps hangup causes of unanswered calls to dispositions', async () => {
    const busy = await placeOutbound('+15557654322');
    const unallocated = await placeOutbound('+15557654323');
    fake.simulateRinging(`attempt-${busy.run.id}`);
    fake.simulateHangup(`attempt-${busy.run.id}`, 17);
    fake.simulateHangup(`attempt-${unallocated.run.id}`, 1);
    await until('finals', async () => (await runOf(busy.run.id)).disposition !== null && (await runOf(unallocated.run.id)).disposition !== null);
    expect(await runOf(busy.run.id)).toMatchObject({ status: 'completed', disposition: 'busy' });
    expect(await runOf(unallocated.run.id)).toMatchObject({ status: 'failed', disposition: 'failed' });
  });

  it('routes an inbound StasisStart to the bound workflow and answers; refuses an unbound extension', async () => {
    fake.simulateInbound({ channelId: 'inbound-1', callerNumber: '+15559876543', dialedExten: '1000', app: APP });
    await until('answered', () => fake.channels.get('inbound-1')?.state === 'Up');
    const list = await svc.get(`/workflow/${workflowId}/runs`, auth);
    const inbound = list.body.runs.find((r: { initial_context: Record<string, unknown> }) => r.initial_context.caller_number === '+15559876543');
    expect(inbound).toMatchObject({ initial_context: { caller_number: '+15559876543', called_number: '1000' } });
    await until('in progress', async () => (await runOf(inbound.id)).status === 'in_progress');
    fake.simulateHangup('inbound-1', 16);
    await until('completed', async () => (await runOf(inbound.id)).status === 'completed');

    fake.simulateInbound({ channelId: 'inbound-2', callerNumber: '+15559876544', dialedExten: '2000', app: APP });
    await until('sent back to the dialplan', () => fake.requests.some((q) => q.path === '/ari/channels/inbound-2/continue'));
    expect(fake.requests.some((q) => q.path === '/ari/channels/inbound-2/answer')).toBe(false);
  });

  it('reconnects after Asterisk drops the WebSocket, with health reported meanwhile', async () => {
    fake.refuseWebSockets = true;
    fake.dropWebSockets();
    await until('unhealthy', () => ariHealth()?.ok === false);
    await until('a failed retry', () => Number(ariHealth()?.detail?.reconnectAttempts ?? 0) >= 1);
    fake.refuseWebSockets = false;
    await until('healthy again', () => ariHealth()?.ok === true);
    expect(ariHealth()?.detail).toMatchObject({ connected: true, reconnects: 1 });
    // Events flow again.
    const { run } = await placeOutbound('+15557654324');
    fake.simulateAnswer(`attempt-${run.id}`);
    await until('in progress', async () => (await runOf(run.id)).status === 'in_progress');
    fake.simulateHangup(`attempt-${run.id}`, 16);
    await until('completed', async () => (await runOf(run.id)).status === 'completed');
  });

  it('closes the socket when the configuration is deleted', async () => {
    const r = await svc.delete(`/organizations/telephony-configs/${configId}`, auth);
    expect(r.status).toBe(200);
    await until('socket closed', () => !fake.connectedApps.some((apps) => apps.includes(APP)));
  });
});
