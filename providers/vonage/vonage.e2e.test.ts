/**
 * Vonage end to end: the running service (startTestService) with the vonage plugin's REST client pointed at
 * the fake Vonage, and webhooks signed as Vonage signs them (HS256 JWT with the body's payload_hash).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MediaTokens } from '../../core/calls/media-token.js';
import { FakeVonageServer } from '../../test/fakes/vonage/fake-vonage-server.js';
import { BOUND, PUBLIC, startProviderE2e, UNBOUND, type ProviderE2e } from '../../test/support/provider-e2e.js';
import type { TestService } from '../../test/support/test-service.js';
import simulator from '../simulator/index.js';
import { createVonagePlugin } from './index.js';

describe('Vonage through the running service', () => {
  let fake: FakeVonageServer;
  let svc: TestService;
  let auth: { token: string };
  let workflowId: number;
  let configId: number;
  let e2e: ProviderE2e;

  async function vonagePost(path: string, body: unknown, signed?: { rawBody: string; headers: Record<string, string> }) {
    const s = signed ?? fake.signWebhook(body);
    return svc.request('POST', `/api/v1${path}`, { rawBody: s.rawBody, headers: s.headers });
  }

  /** Creates an outbound Vonage run and places it through the provider instance, as the campaign engine does. */
  async function placeOutbound(to: string, machineDetection: boolean) {
    const { run, providerCallId } = await e2e.placeOutbound(to, machineDetection);
    return { run, uuid: providerCallId };
  }

  const runOf = (runId: number) => e2e.runOf(runId);
  const event = (uuid: string, status: string, extra: Record<string, unknown> = {}) => ({
    from: '15550001111', to: '15557654321', uuid, conversation_uuid: `CON-${uuid}`, status, direction: 'outbound', timestamp: new Date().toISOString(), ...extra,
  });

  beforeAll(async () => {
    fake = await FakeVonageServer.start({
      numbers: [{ msisdn: '15550001111' }, { msisdn: '15550002222' }], answerUrl: `${PUBLIC}/api/v1/telephony/vonage/inbound`, answerMethod: 'POST',
    });
    e2e = await startProviderE2e({
      provider: 'vonage',
      plugins: [createVonagePlugin({ apiBaseUrl: fake.url, client: { sleep: async () => undefined } }), simulator],
      configuration: {
        name: 'Vonage',
        config: { provider: 'vonage', application_id: fake.applicationId, api_key: fake.apiKey, api_secret: fake.apiSecret, private_key: fake.privateKeyPem, signature_secret: fake.signatureSecret },
      },
    });
    ({ svc, auth, workflowId, configId } = e2e);
    expect(e2e.configBody.credentials.private_key).not.toContain('PRIVATE KEY-----\n');
    expect(e2e.configBody.credentials.api_key).toBe(fake.apiKey);
  });
  afterAll(async () => {
    await svc?.close();
    await fake?.close();
  });

  it('binds a number: linked to the application whose answer URL is our inbound webhook', async () => {
    const r = await svc.post(`/organizations/telephony-configs/${configId}/phone-numbers`, { address: BOUND, inbound_workflow_id: workflowId }, auth);
    expect(r.status).toBe(200);
    expect(r.body.provider_sync).toMatchObject({ ok: true });
    expect(fake.numbers.get('15550001111')?.appId).toBe(fake.applicationId);
    const missing = await svc.post(`/organizations/telephony-configs/${configId}/phone-numbers`, { address: '+15550009999', inbound_workflow_id: workflowId }, auth);
    expect(missing.body.provider_sync).toMatchObject({ ok: false });
    expect((await svc.post(`/organizations/telephony-configs/${configId}/phone-numbers`, { address: UNBOUND }, auth)).status).toBe(200);
  });

  it('creates the call and follows signed events started → ringing → answered → completed', async () => {
    const { run, uuid } = await placeOutbound('+15557654321', false);
    const create = fake.requests.filter((q) => q.path === '/v1/calls').at(-1)?.json;
    expect(create).toMatchObject({ event_url: [`${PUBLIC}/api/v1/telephony/vonage/status/${run.id}`] });
    // Vonage connects the NCCO's websocket as given: its URI carries the run's media token
    const uri = new URL(String((create?.ncco as Array<{ endpoint?: Array<{ uri?: string }> }>)[0]?.endpoint?.[0]?.uri));
    expect(`${uri.origin}${uri.pathname}`).toBe(`wss://cp.example.test/api/v1/telephony/vonage/media/${run.id}`);
    expect(svc.container.get(MediaTokens).verify('vonage', run.id, uri.searchParams.get('token'))).toBe('valid');
    const status = `/telephony/vonage/status/${run.id}`;
    expect((await vonagePost(status, event(uuid, 'started'))).status).toBe(200);
    expect((await vonagePost(status, event(uuid, 'ringing'))).status).toBe(200);
    expect((await runOf(run.id)).status).toBe('ringing');
    await vonagePost(status, event(uuid, 'answered'));
    expect((await runOf(run.id)).status).toBe('in_progress');
    const done = await vonagePost(status, event(uuid, 'completed', { duration: '37', start_time: new Date().toISOString(), end_time: new Date().toISOString() }));
    expect(done.status).toBe(200);
    expect(await runOf(run.id)).toMatchObject({ status: 'completed', disposition: 'completed', duration_seconds: 37 });
    await vonagePost(status, event(uuid, 'ringing'));
    expect((await runOf(run.id)).status).toBe('completed');
  });

  it('refuses unsigned, forged and tampered webhooks with 403', async () => {
    const { run, uuid } = await placeOutbound('+15557654322', false);
    const status = `/telephony/vonage/status/${run.id}`;
    const body = event(uuid, 'completed', { duration: '5' });
    const forged = await vonagePost(status, body, fake.signWebhook(body, { secret: 'not-the-secret' }));
    expect(forged.status).toBe(403);
    expect(forged.body).toMatchObject({ code: 'signature_invalid' });
    const good = fake.signWebhook(body);
    expect((await vonagePost(status, body, { ...good, rawBody: good.rawBody.replace('"5"', '"500"') })).status).toBe(403);
    expect((await vonagePost(status, body, { rawBody: good.rawBody, headers: { 'content-type': 'application/json' } })).status).toBe(403);
    expect((await vonagePost(status, body, fake.signWebhook(body, { claims: { api_key: 'someone-else' } }))).status).toBe(403);
    expect((await runOf(run.id)).status).toBe('queued');
  });

  it('asks Vonage to hang up on machines and ends such a call as voicemail', async () => {
    const { run, uuid } = await placeOutbound('+15557654323', true);
    expect(fake.requests.filter((q) => q.path === '/v1/calls').at(-1)?.json?.machine_detection).toBe('hangup');
    const status = `/telephony/vonage/status/${run.id}`;
    await vonagePost(status, event(uuid, 'answered'));
    await vonagePost(status, event(uuid, 'machine', { call_uuid: uuid }));
    await vonagePost(status, event(uuid, 'completed', { duration: '4' }));
    expect(await runOf(run.id)).toMatchObject({ status: 'completed', disposition: 'voicemail' });
  });

  it('answers an inbound call to a bound number with a connect NCCO, and others with a polite talk', async () => {
    const answer = { to: '15550001111', from: '15559876543', uuid: 'b0b0b0b0-0000-4000-8000-000000000001', conversation_uuid: 'CON-b0b0b0b0', region_url: 'https://api-us-3.vonage.com' };
    const r = await vonagePost('/telephony/vonage/inbound', answer);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/json/);
    const ncco = r.body as Array<{ action: string; eventUrl: string[]; endpoint: Array<{ uri: string }> }>;
    expect(ncco[0]?.action).toBe('connect');
    const runId = Number(/media\/(\d+)/.exec(ncco[0]!.endpoint[0]!.uri)?.[1]);
    expect(ncco[0]?.eventUrl).toEqual([`${PUBLIC}/api/v1/telephony/vonage/status/${runId}`]);
    expect(await runOf(runId)).toMatchObject({ status: 'queued', initial_context: { caller_number: '+15559876543', called_number: BOUND } });
    // The connected leg's events (a uuid of their own, the inbound call's conversation) move the inbound run.
    const leg = (status: string, extra: Record<string, unknown> = {}) => event('c0c0c0c0-0000-4000-8000-000000000001', status, { conversation_uuid: answer.conversation_uuid, ...extra });
    // a leg of another conversation is another call's: not applied
    expect((await vonagePost(`/telephony/vonage/status/${runId}`, event('d0d0d0d0-0000-4000-8000-000000000001', 'answered'))).body).toEqual({ received: true, applied: false });
    await vonagePost(`/telephony/vonage/status/${runId}`, { ...leg('answered'), direction: 'outbound' });
    expect((await runOf(runId)).status).toBe('in_progress');
    await vonagePost(`/telephony/vonage/status/${runId}`, leg('completed', { duration: '61' }));
    expect(await runOf(runId)).toMatchObject({ status: 'completed', disposition: 'completed', duration_seconds: 61 });

    const refused = await vonagePost('/telephony/vonage/inbound', { ...answer, uuid: 'b0b0b0b0-0000-4000-8000-000000000002', to: '15550002222' });
    expect(refused.status).toBe(200);
    expect(refused.body).toEqual([{ action: 'talk', text: expect.stringMatching(/^Sorry/) }]);
    const forged = await vonagePost('/telephony/vonage/inbound', { ...answer, uuid: 'b0b0b0b0-0000-4000-8000-000000000003' }, fake.signWebhook({ ...answer, uuid: 'b0b0b0b0-0000-4000-8000-000000000003' }, { secret: 'forged' }));
    expect(forged.status).toBe(403);
  });
  it('a correctly signed event of run A posted to run B\'s status URL is not applied to B; a replayed year-old signature is refused (403)', async () => {
    const a = await placeOutbound('+15557654331', false);
    const b = await placeOutbound('+15557654332', false);
    expect((await vonagePost(`/telephony/vonage/status/${a.run.id}`, event(a.uuid, 'answered'))).body).toEqual({ received: true, applied: true });
    expect((await vonagePost(`/telephony/vonage/status/${b.run.id}`, event(b.uuid, 'ringing'))).body).toEqual({ received: true, applied: true });
    const aDone = fake.signWebhook(event(a.uuid, 'completed', { duration: '30' }));
    expect((await vonagePost(`/telephony/vonage/status/${b.run.id}`, null, aDone)).body).toEqual({ received: true, applied: false });
    expect(await runOf(b.run.id)).toMatchObject({ status: 'ringing' });
    // a run with no recorded call id yet does not take another run's either
    const c = await placeOutbound('+15557654333', false);
    expect((await vonagePost(`/telephony/vonage/status/${c.run.id}`, null, aDone)).body).toEqual({ received: true, applied: false });
    expect(await runOf(c.run.id)).toMatchObject({ status: 'queued' });
    // the same signed body on its own run applies
    expect((await vonagePost(`/telephony/vonage/status/${a.run.id}`, null, aDone)).body).toEqual({ received: true, applied: true });

    const yearOld = Math.floor(Date.now() / 1000) - 365 * 86_400;
    const replayed = fake.signWebhook(event(b.uuid, 'completed', { duration: '5' }), { claims: { iat: yearOld } });
    expect((await vonagePost(`/telephony/vonage/status/${b.run.id}`, null, replayed)).status).toBe(403);
    const undated = fake.signWebhook(event(b.uuid, 'completed', { duration: '5' }), { claims: { iat: undefined } });
    expect((await vonagePost(`/telephony/vonage/status/${b.run.id}`, null, undated)).status).toBe(403);
  });

  it('drops a duration beyond a day from a signed event, applies the status, and logs why', async () => {
    const { run, uuid } = await placeOutbound('+15557654334', false);
    const done = await vonagePost(`/telephony/vonage/status/${run.id}`, event(uuid, 'completed', { duration: '99999999' }));
    expect(done.body).toEqual({ received: true, applied: true });
    const r = await runOf(run.id);
    expect(r).toMatchObject({ status: 'completed', disposition: 'completed' });
    expect(r.duration_seconds ?? 0).toBe(0);
    expect(r.cost_info.charge_usd ?? 0).toBe(0);
    expect(svc.logs.join('\n')).toContain('call duration ignored');
  });
});
