/**
 * Telnyx end to end: the running service (startTestService) with the telnyx plugin's REST client pointed at
 * the fake Telnyx API, and webhooks signed as Telnyx signs them (Ed25519 over `timestamp|raw body`).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MediaTokens } from '../../core/calls/media-token.js';
import { FakeTelnyxServer } from '../../test/fakes/telnyx/fake-telnyx-server.js';
import { BOUND, PUBLIC, startProviderE2e, UNBOUND, type ProviderE2e } from '../../test/support/provider-e2e.js';
import type { TestService } from '../../test/support/test-service.js';
import simulator from '../simulator/index.js';
import { createTelnyxPlugin } from './index.js';

describe('Telnyx through the running service', () => {
  let fake: FakeTelnyxServer;
  let svc: TestService;
  let auth: { token: string };
  let workflowId: number;
  let configId: number;
  let e2e: ProviderE2e;

  /** POSTs an event to the service as Telnyx does; `signed` overrides the signature headers. */
  async function telnyxPost(path: string, body: unknown, signed?: { rawBody: string; headers: Record<string, string> }) {
    const s = signed ?? fake.signWebhook(body);
    return svc.request('POST', `/api/v1${path}`, { rawBody: s.rawBody, headers: s.headers });
  }

  /** Creates an outbound Telnyx run and places it through the provider instance, as the campaign engine does. */
  async function placeOutbound(to: string, machineDetection: boolean) {
    const { run, providerCallId } = await e2e.placeOutbound(to, machineDetection);
    return { run, callControlId: providerCallId };
  }

  const runOf = (runId: number) => e2e.runOf(runId);

  beforeAll(async () => {
    fake = await FakeTelnyxServer.start({ numbers: [{ phoneNumber: BOUND }, { phoneNumber: UNBOUND }] });
    e2e = await startProviderE2e({
      provider: 'telnyx',
      plugins: [createTelnyxPlugin({ apiBaseUrl: fake.url, client: { sleep: async () => undefined } }), simulator],
      configuration: {
        name: 'Telnyx', config: { provider: 'telnyx', api_key: fake.apiKey, connection_id: fake.connectionId, webhook_public_key: fake.publicKeyBase64 },
      },
    });
    ({ svc, auth, workflowId, configId } = e2e);
    expect(e2e.configBody.credentials.api_key).not.toBe(fake.apiKey);
    expect(e2e.configBody.credentials.connection_id).toBe(fake.connectionId);
  });
  afterAll(async () => {
    await svc?.close();
    await fake?.close();
  });

  it('binds a number: it joins the Call Control application, whose webhook becomes our inbound URL', async () => {
    const r = await svc.post(`/organizations/telephony-configs/${configId}/phone-numbers`, { address: BOUND, inbound_workflow_id: workflowId }, auth);
    expect(r.status).toBe(200);
    expect(r.body.provider_sync).toMatchObject({ ok: true });
    expect([...fake.numbers.values()].find((n) => n.phoneNumber === BOUND)?.connectionId).toBe(fake.connectionId);
    expect(fake.application.webhookEventUrl).toBe(`${PUBLIC}/api/v1/telephony/telnyx/inbound`);
    const missing = await svc.post(`/organizations/telephony-configs/${configId}/phone-numbers`, { address: '+15550009999', inbound_workflow_id: workflowId }, auth);
    expect(missing.status).toBe(200);
    expect(missing.body.provider_sync).toMatchObject({ ok: false });
    const unbound = await svc.post(`/organizations/telephony-configs/${configId}/phone-numbers`, { address: UNBOUND }, auth);
    expect(unbound.status).toBe(200);
  });

  it('dials and follows signed events ringing → in_progress → completed', async () => {
    const { run, callControlId } = await placeOutbound('+15557654321', false);
    const dial = fake.requests.filter((q) => q.path === '/v2/calls').at(-1)?.json;
    expect(dial).toMatchObject({ webhook_url: `${PUBLIC}/api/v1/telephony/telnyx/status/${run.id}` });
    // Telnyx streams to the URL it is given: it carries the run's media token
    const stream = new URL(String(dial?.stream_url));
    expect(`${stream.origin}${stream.pathname}`).toBe(`wss://cp.example.test/api/v1/telephony/telnyx/media/${run.id}`);
    expect(svc.container.get(MediaTokens).verify('telnyx', run.id, stream.searchParams.get('token'))).toBe('valid');
    expect((await runOf(run.id)).status).toBe('queued');
    const status = `/telephony/telnyx/status/${run.id}`;
    const payload = { call_control_id: callControlId, from: BOUND, to: '+15557654321', direction: 'outgoing' };

    expect((await telnyxPost(status, fake.event('call.initiated', { ...payload, state: 'bridging' }))).status).toBe(200);
    expect((await runOf(run.id)).status).toBe('ringing');
    expect((await telnyxPost(status, fake.event('call.answered', { ...payload, state: 'answered' }))).status).toBe(200);
    expect((await runOf(run.id)).status).toBe('in_progress');
    const ignored = await telnyxPost(status, fake.event('streaming.stopped', payload));
    expect(ignored.body).toMatchObject({ received: true, applied: false });
    expect((await telnyxPost(status, fake.event('call.hangup', { ...payload, hangup_cause: 'normal_clearing', hangup_source: 'callee' }))).status).toBe(200);
    expect(await runOf(run.id)).toMatchObject({ status: 'completed', disposition: 'completed' });
    await telnyxPost(status, fake.event('call.initiated', payload));
    expect((await runOf(run.id)).status).toBe('completed');
  });

  it('refuses forged, tampered and stale webhooks with 403 and changes nothing', async () => {
    const { run, callControlId } = await placeOutbound('+15557654322', false);
    const status = `/telephony/telnyx/status/${run.id}`;
    const body = fake.event('call.hangup', { call_control_id: callControlId, hangup_cause: 'normal_clearing' });
    const good = fake.signWebhook(body);
    const tampered = { ...good, rawBody: good.rawBody.replace('normal_clearing', 'user_busy') };
    expect((await telnyxPost(status, body, tampered)).status).toBe(403);
    const stale = fake.signWebhook(body, Math.floor(Date.now() / 1000) - 3600);
    const r = await telnyxPost(status, body, stale);
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: 'signature_invalid' });
    expect((await telnyxPost(status, body, { rawBody: good.rawBody, headers: { 'content-type': 'application/json' } })).status).toBe(403);
    expect((await runOf(run.id)).status).toBe('queued');
  });

  it('a correctly signed event of run A posted to run B\'s status URL is not applied to B; 6 minutes old is stale', async () => {
    const a = await placeOutbound('+15557654331', false);
    const b = await placeOutbound('+15557654332', false);
    const payload = (id: string) => ({ call_control_id: id, from: BOUND, to: '+15557654331', direction: 'outgoing' });
    expect((await telnyxPost(`/telephony/telnyx/status/${a.run.id}`, fake.event('call.answered', payload(a.callControlId)))).body).toMatchObject({ applied: true });
    expect((await telnyxPost(`/telephony/telnyx/status/${b.run.id}`, fake.event('call.initiated', payload(b.callControlId)))).body).toMatchObject({ applied: true });
    const aHangup = fake.event('call.hangup', { ...payload(a.callControlId), hangup_cause: 'normal_clearing' });
    const signed = fake.signWebhook(aHangup);
    expect((await telnyxPost(`/telephony/telnyx/status/${b.run.id}`, aHangup, signed)).body).toEqual({ received: true, applied: false });
    expect((await runOf(b.run.id)).status).toBe('ringing');
    expect((await telnyxPost(`/telephony/telnyx/status/${a.run.id}`, aHangup, signed)).body).toEqual({ received: true, applied: true });
    const sixMinutes = fake.signWebhook(fake.event('call.hangup', { ...payload(b.callControlId), hangup_cause: 'normal_clearing' }), Math.floor(Date.now() / 1000) - 360);
    expect((await telnyxPost(`/telephony/telnyx/status/${b.run.id}`, null, sixMinutes)).status).toBe(403);
  });

  it('asks for AMD, hangs up a machine and ends the run as voicemail', async () => {
    const { run, callControlId } = await placeOutbound('+15557654323', true);
    expect(fake.requests.filter((q) => q.path === '/v2/calls').at(-1)?.json?.answering_machine_detection).toBe('detect');
    const status = `/telephony/telnyx/status/${run.id}`;
    await telnyxPost(status, fake.event('call.answered', { call_control_id: callControlId }));
    await telnyxPost(status, fake.event('call.machine.detection.ended', { call_control_id: callControlId, result: 'machine' }));
    expect(await runOf(run.id)).toMatchObject({ status: 'completed', disposition: 'voicemail' });
    for (let i = 0; i < 50 && fake.calls.get(callControlId)?.isAlive; i++) await new Promise((res) => setTimeout(res, 10));
    expect(fake.calls.get(callControlId)?.isAlive).toBe(false);
    await telnyxPost(status, fake.event('call.hangup', { call_control_id: callControlId, hangup_cause: 'normal_clearing', hangup_source: 'caller' }));
    expect((await runOf(run.id)).disposition).toBe('voicemail');
  });

  it('answers an inbound call to a bound number through the API, declines others, refuses forgeries', async () => {
    const call = fake.incomingCall('+15559876543', BOUND);
    const initiated = fake.event('call.initiated', { call_control_id: call.callControlId, direction: 'incoming', state: 'parked', from: '+15559876543', to: BOUND });
    const r = await telnyxPost('/telephony/telnyx/inbound', initiated);
    expect(r.status).toBe(200);
    const runId = Number(r.body.run_id);
    expect(await runOf(runId)).toMatchObject({ status: 'queued', initial_context: { caller_number: '+15559876543', called_number: BOUND } });
    for (let i = 0; i < 50 && !call.answered; i++) await new Promise((res) => setTimeout(res, 10));
    expect(call.answerRequest).toMatchObject({
      stream_bidirectional_mode: 'rtp', stream_bidirectional_codec: 'PCMU',
      stream_url: expect.stringMatching(new RegExp(`^wss://cp\\.example\\.test/api/v1/telephony/telnyx/media/${runId}(\\?token=[^&]+)?$`)), webhook_url: `${PUBLIC}/api/v1/telephony/telnyx/status/${runId}`,
    });
    // The call's later events go to the run's status URL.
    await telnyxPost(`/telephony/telnyx/status/${runId}`, fake.event('call.answered', { call_control_id: call.callControlId, direction: 'incoming' }));
    expect((await runOf(runId)).status).toBe('in_progress');
    await telnyxPost(`/telephony/telnyx/status/${runId}`, fake.event('call.hangup', { call_control_id: call.callControlId, direction: 'incoming', hangup_cause: 'normal_clearing', hangup_source: 'caller' }));
    expect(await runOf(runId)).toMatchObject({ status: 'completed', disposition: 'completed' });

    const other = fake.incomingCall('+15559876543', UNBOUND);
    const declined = await telnyxPost('/telephony/telnyx/inbound', fake.event('call.initiated', { call_control_id: other.callControlId, direction: 'incoming', from: '+15559876543', to: UNBOUND }));
    expect(declined.status).toBe(200);
    expect(declined.body).toMatchObject({ received: true, answered: false, reason: 'phone_number_not_found' });
    await new Promise((res) => setTimeout(res, 30));
    expect(other.answered).toBe(false);

    const forgedBody = fake.event('call.initiated', { call_control_id: 'v3:forged', direction: 'incoming', from: '+15559876543', to: BOUND });
    const forged = await telnyxPost('/telephony/telnyx/inbound', forgedBody, { ...fake.signWebhook(forgedBody), rawBody: JSON.stringify(forgedBody).replace('forged', 'forget') });
    expect(forged.status).toBe(403);
  });
});
