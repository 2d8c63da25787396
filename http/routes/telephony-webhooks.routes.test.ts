/**
 * The one call-status path (ApplyCallStatus) and the configuration delete guard, through the wired service:
 * real SQLite repositories, the simulator provider, listeners as the campaign engine registers them.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApplyCallStatus } from '../../core/calls/apply-call-status.use-case.js';
import { CallOutcomeListeners } from '../../core/calls/call-outcome-listener.js';
import { ConflictError } from '../../core/errors.js';
import { silentLogger } from '../../core/ports/logger.port.js';
import { PhoneNumberRepository } from '../../core/ports/phone-number.repository.port.js';
import { RunRepository } from '../../core/ports/run.repository.port.js';
import { TelephonyConfigurationRepository } from '../../core/ports/telephony-configuration.repository.port.js';
import type { CallOutcome } from '../../core/ports/telephony-provider.port.js';
import type { Run } from '../../core/runs/run.js';
import { ProviderInstances } from '../../core/telephony/provider-instances.js';
import { DeleteTelephonyConfiguration, TelephonyConfigurationReader } from '../../core/telephony/telephony-configurations.use-case.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { startTestService, type TestService } from '../../test/support/test-service.js';
import type { ProviderPlugin, WebhookRequest } from '../../core/ports/telephony-provider.port.js';
import { silentLogger as quiet } from '../../core/ports/logger.port.js';
import plivo from '../../providers/plivo/index.js';
import twilio from '../../providers/twilio/index.js';
import vonage from '../../providers/vonage/index.js';

describe('call status path (ApplyCallStatus) and provider instances', () => {
  let svc: TestService;
  let token: string;
  let orgId: number;
  let workflowId: number;
  let configId: number;
  const finished: Array<[number, CallOutcome]> = [];
  beforeAll(async () => {
    svc = await startTestService();
    const s = await svc.signup();
    token = s.token;
    orgId = s.organizationId;
    workflowId = (await svc.post('/workflow/create/definition', { name: 'wf', workflow_definition: exampleWorkflowDefinition }, { token })).body.id;
    configId = (await svc.post('/organizations/telephony-configs', { name: 'sim', config: { provider: 'simulator', ring_ms: 0, talk_ms: 5 } }, { token })).body.id;
    svc.container.get(CallOutcomeListeners).add({ onRunFinished: async (run: Run, outcome: CallOutcome) => { finished.push([run.id, outcome]); } });
    svc.container.get(CallOutcomeListeners).add({ onRunFinished: async () => { throw new Error('a failing listener never undoes the status'); } });
  });
  afterAll(async () => {
    await svc.close();
  });

  let n = 0;
  const newRun = async (over: Partial<Parameters<RunRepository['create']>[1]> = {}) => {
    const runs = svc.container.get<RunRepository>(RunRepository);
    const wf = (await svc.get(`/workflow/${workflowId}`, { token })).body;
    return runs.create(orgId, {
      workflowId, definitionId: wf.current_definition_id, name: `call ${++n}`, mode: 'outbound',
      telephonyConfigurationId: configId, provider: 'simulator', providerCallId: `pc-${n}`, calledNumber: '+14155550142', initialContext: {}, now: new Date(), ...over,
    });
  };
  const apply = () => svc.container.get(ApplyCallStatus);
  const get = (id: number) => svc.container.get<RunRepository>(RunRepository).get(orgId, id);

  it('maps outcomes to dispositions on final statuses and tells listeners once', async () => {
    const busy = await newRun();
    expect((await apply().execute('simulator', { kind: 'status', status: 'ringing' }, busy.id)).applied).toBe(true);
    const r = await apply().execute('simulator', { kind: 'status', status: 'failed', outcome: 'busy', durationSeconds: 0 }, busy.id);
    expect(r).toMatchObject({ applied: true, outcome: 'busy' });
    // whatever final state the provider names, a busy call ends `completed` with disposition busy (finalRunStatusFor)
    expect(await get(busy.id)).toMatchObject({ status: 'completed', disposition: 'busy', gatheredContext: { mapped_call_disposition: 'busy' } });
    expect((await apply().execute('simulator', { kind: 'status', status: 'failed', outcome: 'busy' }, busy.id)).applied).toBe(false);
    expect((await apply().execute('simulator', { kind: 'status', status: 'in_progress' }, busy.id)).applied).toBe(false);
    expect(finished.filter(([id]) => id === busy.id)).toEqual([[busy.id, 'busy']]);
  });

  it('keeps the disposition the agent set on a connected call; completed otherwise; finds runs by provider call id', async () => {
    const agent = await newRun({ providerCallId: 'pc-agent' });
    await svc.container.get<RunRepository>(RunRepository).applyStatus(orgId, agent.id, { status: 'in_progress', gatheredContext: { mapped_call_disposition: 'appointment_booked' }, at: new Date() });
    await apply().execute('simulator', { kind: 'status', providerCallId: 'pc-agent', status: 'completed', outcome: 'completed', durationSeconds: 12 });
    expect(await get(agent.id)).toMatchObject({ status: 'completed', disposition: 'appointment_booked', durationSeconds: 12, costInfo: expect.objectContaining({ call_duration_seconds: 12 }) });
    const plain = await newRun();
    await apply().execute('simulator', { kind: 'status', status: 'completed' }, plain.id);
    expect(await get(plain.id)).toMatchObject({ disposition: 'completed' });
    expect(finished).toContainEqual([plain.id, 'completed']);
  });

  it('never applies an event to a run of another provider or an unknown run', async () => {
    const run = await newRun();
    expect(await apply().execute('twilio', { kind: 'status', status: 'completed' }, run.id)).toMatchObject({ applied: false, reason: 'run_not_found' });
    expect(await apply().execute('simulator', { kind: 'status', status: 'completed' }, 987654)).toMatchObject({ applied: false, reason: 'run_not_found' });
    expect(await apply().execute('simulator', { kind: 'status', providerCallId: 'nope', status: 'completed' })).toMatchObject({ applied: false });
    expect(await apply().execute('simulator', { kind: 'ignored', reason: 'x' }, run.id)).toMatchObject({ applied: false });
    expect((await get(run.id))!.status).toBe('queued');
  });

  it('placeCall through the configuration instance plays the simulator through the same path', async () => {
    const run = await newRun({ providerCallId: null, calledNumber: '+14155550103' });
    const c = (await svc.container.get<TelephonyConfigurationRepository>(TelephonyConfigurationRepository).get(orgId, configId))!;
    const provider = svc.container.get(ProviderInstances).forConfiguration(c);
    expect(svc.container.get(ProviderInstances).forConfiguration(c)).toBe(provider);
    const placed = await provider.placeCall({
      attemptKey: `att-${run.id}`, organizationId: orgId, runId: run.id, to: '+14155550103', from: null,
      statusCallbackUrl: '', answerUrl: '', mediaUrl: '', machineDetection: true, ringTimeoutSeconds: 30,
    });
    const start = Date.now();
    while ((await get(run.id))!.status !== 'completed') {
      if (Date.now() - start > 5000) throw new Error('never completed');
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(await get(run.id)).toMatchObject({ disposition: 'voicemail', providerCallId: placed.providerCallId });
    expect(finished).toContainEqual([run.id, 'voicemail']);
    // a configuration change replaces the instance
    const changed = await svc.put(`/organizations/telephony-configs/${configId}`, { config: { talk_ms: 6 } }, { token });
    expect(changed.status).toBe(200);
    const c2 = (await svc.container.get<TelephonyConfigurationRepository>(TelephonyConfigurationRepository).get(orgId, configId))!;
    const replaced = svc.container.get(ProviderInstances).forConfiguration(c2);
    expect(replaced).not.toBe(provider);
    // a rename or a default switch keeps the instance (a persistent connection stays up)
    await svc.put(`/organizations/telephony-configs/${configId}`, { name: 'renamed' }, { token });
    await svc.post(`/organizations/telephony-configs/${configId}/set-default-outbound`, undefined, { token });
    const c3 = (await svc.container.get<TelephonyConfigurationRepository>(TelephonyConfigurationRepository).get(orgId, configId))!;
    expect(svc.container.get(ProviderInstances).forConfiguration(c3)).toBe(replaced);
  });

  it('never applies another call\'s event: a call id other than the recorded one, or one another run recorded; a run without one records it', async () => {
    const a = await newRun({ providerCallId: 'CA-run-a' });
    const b = await newRun({ providerCallId: 'CA-run-b' });
    const mismatch = await apply().execute('simulator', { kind: 'status', providerCallId: 'CA-run-a', status: 'completed', outcome: 'completed', durationSeconds: 9 }, b.id);
    expect(mismatch).toMatchObject({ applied: false, reason: 'provider_call_id_mismatch' });
    expect(await get(b.id)).toMatchObject({ status: 'queued', providerCallId: 'CA-run-b' });
    expect(svc.logs.join('\n')).toContain('call status of another call ignored');
    // a run with no recorded id yet does not take an id another run recorded (the repository's conflict)
    const c = await newRun({ providerCallId: null });
    expect(await apply().execute('simulator', { kind: 'status', providerCallId: 'CA-run-a', status: 'ringing' }, c.id)).toMatchObject({ applied: false, reason: 'provider_call_id_mismatch' });
    // it records the first id of its own, and then never changes it
    expect(await apply().execute('simulator', { kind: 'status', providerCallId: 'CA-run-c', status: 'ringing' }, c.id)).toMatchObject({ applied: true });
    expect(await apply().execute('simulator', { kind: 'status', providerCallId: 'CA-other', status: 'in_progress' }, c.id)).toMatchObject({ applied: false, reason: 'provider_call_id_mismatch' });
    expect(await get(c.id)).toMatchObject({ status: 'ringing', providerCallId: 'CA-run-c' });
    // an event naming the recorded id among its other ids (a leg of the same conversation) is the run's
    expect(await apply().execute('simulator', { kind: 'status', providerCallId: 'leg-2', callIds: ['CA-run-c'], status: 'in_progress' }, c.id)).toMatchObject({ applied: true });
    expect(await get(c.id)).toMatchObject({ status: 'in_progress', providerCallId: 'CA-run-c' });
    // and an event naming no id at all is applied by run id (the simulator's own timers, reconcilers)
    expect(await apply().execute('simulator', { kind: 'status', status: 'completed', outcome: 'completed' }, a.id)).toMatchObject({ applied: true });
  });

  it('drops a duration outside 0..86,400 s from every carrier\'s final callback: the status applies, the duration and charge do not, the reason is logged', async () => {
    const ctx = { publicUrl: 'https://cp.example.test', reportStatus: async () => undefined, reportInbound: async () => ({ refused: 'x' }), allowPrivateNetwork: false, log: quiet };
    const carriers: Array<[string, ProviderPlugin, Record<string, unknown>, (id: string) => Record<string, unknown>]> = [
      ['twilio', twilio, { account_sid: `AC${'0'.repeat(32)}`, auth_token: 'tok' }, (id) => ({ AccountSid: `AC${'0'.repeat(32)}`, CallSid: id, CallStatus: 'completed', CallDuration: '99999999' })],
      ['plivo', plivo, { auth_id: 'MAXXXXXXXXXXXXXXXXXX', auth_token: 'tok' }, (id) => ({ CallUUID: id, CallStatus: 'completed', Duration: '99999999', HangupCause: 'NORMAL_CLEARING' })],
      ['vonage', vonage, { application_id: 'app', api_key: 'key', api_secret: 'secret', private_key: 'none', signature_secret: 'sig' }, (id) => ({ uuid: id, status: 'completed', duration: '99999999' })],
    ];
    for (const [provider, plugin, config, body] of carriers) {
      const run = await newRun({ provider, providerCallId: `${provider}-long-1` });
      const instance = plugin.create({ ...config, configurationId: configId, organizationId: orgId }, ctx);
      const request: WebhookRequest = { publicUrl: `https://cp.example.test/api/v1/telephony/${provider}/status/${run.id}`, method: 'POST', headers: {}, body: body(`${provider}-long-1`), query: {}, runId: run.id };
      const event = instance.parseStatusCallback(request);
      expect(event).toMatchObject({ kind: 'status', status: 'completed', durationSeconds: 99_999_999 });
      expect(await apply().execute(provider, event, run.id)).toMatchObject({ applied: true, outcome: 'completed' });
      const stored = (await get(run.id))!;
      expect(stored).toMatchObject({ status: 'completed', disposition: 'completed' });
      expect(stored.durationSeconds ?? 0).toBe(0);
      expect(stored.costInfo.charge_usd ?? 0).toBe(0);
      await instance.close();
    }
    // ARI (and any event-driven source) reports through the same path: a call "lasting" past a day is dropped too
    const ari = await newRun({ provider: 'ari', providerCallId: 'chan-long' });
    expect(await apply().execute('ari', { kind: 'status', providerCallId: 'chan-long', status: 'completed', outcome: 'completed', durationSeconds: 86_401 }, ari.id)).toMatchObject({ applied: true });
    expect((await get(ari.id))!.durationSeconds ?? 0).toBe(0);
    // the bound itself is kept
    const day = await newRun({ providerCallId: 'sim-day' });
    await apply().execute('simulator', { kind: 'status', providerCallId: 'sim-day', status: 'completed', outcome: 'completed', durationSeconds: 86_400 }, day.id);
    expect(await get(day.id)).toMatchObject({ durationSeconds: 86_400 });
    expect(svc.logs.filter((l) => l.includes('call duration ignored')).length).toBeGreaterThanOrEqual(4);
  });

  it('refuses to delete a configuration a live campaign uses (409 telephony_configuration_in_use)', async () => {
    const c = svc.container;
    const del = new DeleteTelephonyConfiguration(
      c.get(TelephonyConfigurationRepository), c.get(PhoneNumberRepository), c.get(TelephonyConfigurationReader),
      { countActiveCampaignsUsingConfiguration: async (org, id) => (org === orgId && id === configId ? 1 : 0) },
      c.get(ProviderInstances), silentLogger,
    );
    const err = await del.execute(orgId, configId).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as ConflictError).code).toBe('telephony_configuration_in_use');
    expect((await svc.get(`/organizations/telephony-configs/${configId}`, { token })).status).toBe(200);
  });
});
