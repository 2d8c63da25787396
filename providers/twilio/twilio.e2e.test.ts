/**
 * Twilio end to end: the running service (startTestService) with the twilio plugin's REST client pointed at
 * the fake Twilio API, and signed webhooks posted as Twilio would (signatures over CALLPLANE_PUBLIC_URL + path).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import ari from '../ari/index.js';
import simulator from '../simulator/index.js';
import { FakeTwilioServer } from '../../test/fakes/twilio/fake-twilio-server.js';
import { BOUND, PUBLIC, startProviderE2e, UNBOUND, type ProviderE2e } from '../../test/support/provider-e2e.js';
import type { TestService } from '../../test/support/test-service.js';
import { computeTwilioSignature } from './twilio-signature.js';
import { createTwilioPlugin } from './index.js';

describe('Twilio through the running service', () => {
  let fake: FakeTwilioServer;
  let svc: TestService;
  let auth: { token: string };
  let workflowId: number;
  let configId: number;
  let e2e: ProviderE2e;

  /** POSTs a form to the service as Twilio does, signed over the public URL unless a signature is given. */
  async function twilioPost(path: string, form: Record<string, string>, signature?: string) {
    const url = `/api/v1${path}`;
    const sig = signature ?? computeTwilioSignature(fake.authToken, PUBLIC + url, form);
    return svc.request('POST', url, {
      rawBody: new URLSearchParams(form).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': sig },
    });
  }

  /** Creates an outbound Twilio run and places it through the provider instance, as the campaign engine does. */
  async function placeOutbound(to: string, machineDetection: boolean) {
    const { run, providerCallId } = await e2e.placeOutbound(to, machineDetection);
    return { run, callSid: providerCallId };
  }

  const runOf = (runId: number) => e2e.runOf(runId);

  beforeAll(async () => {
    fake = await FakeTwilioServer.start({ numbers: [{ phoneNumber: BOUND }, { phoneNumber: UNBOUND }] });
    e2e = await startProviderE2e({
      provider: 'twilio',
      plugins: [ari, createTwilioPlugin({ apiBaseUrl: fake.url, client: { sleep: async () => undefined } }), simulator],
      configuration: { name: 'Twilio', config: { provider: 'twilio', account_sid: fake.accountSid, auth_token: fake.authToken } },
    });
    ({ svc, auth, workflowId, configId } = e2e);
  });
  afterAll(async () => {
    await svc?.close();
    await fake?.close();
  });

  it('binds a number: the Twilio number now sends calls to our inbound webhook', async () => {
    const r = await svc.post(`/organizations/telephony-configs/${configId}/phone-numbers`, { address: BOUND, inbound_workflow_id: workflowId }, auth);
    expect(r.status).toBe(200);
    expect(r.body.provider_sync).toMatchObject({ ok: true });
    const number = [...fake.numbers.values()].find((n) => n.phoneNumber === BOUND);
    expect(number).toMatchObject({ voiceUrl: `${PUBLIC}/api/v1/telephony/twilio/inbound`, voiceMethod: 'POST' });
    // A number Twilio does not know: saved, with a warning.
    const missing = await svc.post(`/organizations/telephony-configs/${configId}/phone-numbers`, { address: '+15550009999', inbound_workflow_id: workflowId }, auth);
    expect(missing.status).toBe(200);
    expect(missing.body.provider_sync).toMatchObject({ ok: false });
  });

  it('places a call and follows signed status callbacks queued → ringing → in_progress → completed', async () => {
    const { run, callSid } = await placeOutbound('+15557654321', false);
    const sent = fake.requests.filter((q) => q.path.endsWith('/Calls.json')).at(-1)?.form;
    expect(sent).toMatchObject({
      Url: `${PUBLIC}/api/v1/telephony/twilio/answer/${run.id}`, StatusCallback: `${PUBLIC}/api/v1/telephony/twilio/status/${run.id}`,
      StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
    });
    expect((await runOf(run.id)).status).toBe('queued');
    const base = { AccountSid: fake.accountSid, CallSid: callSid, From: BOUND, To: '+15557654321', Direction: 'outbound-api' };
    const status = `/telephony/twilio/status/${run.id}`;

    expect((await twilioPost(status, { ...base, CallStatus: 'initiated' })).status).toBe(200);
    expect((await twilioPost(status, { ...base, CallStatus: 'ringing' })).status).toBe(200);
    expect((await runOf(run.id)).status).toBe('ringing');

    // The answer URL gives TwiML connecting the call to the media WebSocket.
    const answer = await twilioPost(`/telephony/twilio/answer/${run.id}`, { ...base, CallStatus: 'in-progress' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/xml/);
    expect(answer.text).toContain(`<Connect><Stream url="wss://cp.example.test/api/v1/telephony/twilio/media/${run.id}">`);

    expect((await twilioPost(status, { ...base, CallStatus: 'in-progress' })).status).toBe(200);
    expect((await runOf(run.id)).status).toBe('in_progress');
    const done = await twilioPost(status, { ...base, CallStatus: 'completed', CallDuration: '37' });
    expect(done.status).toBe(200);
    const finished = await runOf(run.id);
    expect(finished).toMatchObject({ status: 'completed', disposition: 'completed', duration_seconds: 37 });
    // A late, older callback does not move the call backwards.
    await twilioPost(status, { ...base, CallStatus: 'ringing' });
    expect((await runOf(run.id)).status).toBe('completed');
  });

  it('refuses a bad signature with 403 and changes nothing', async () => {
    const { run, callSid } = await placeOutbound('+15557654322', false);
    const form = { AccountSid: fake.accountSid, CallSid: callSid, CallStatus: 'completed', CallDuration: '5' };
    const forged = await twilioPost(`/telephony/twilio/status/${run.id}`, form, computeTwilioSignature('not-the-token', `${PUBLIC}/api/v1/telephony/twilio/status/${run.id}`, form));
    expect(forged.status).toBe(403);
    expect(forged.body).toMatchObject({ code: 'signature_invalid' });
    // Signed for another run's URL: also refused.
    const replayed = await twilioPost(`/telephony/twilio/status/${run.id}`, form, computeTwilioSignature(fake.authToken, `${PUBLIC}/api/v1/telephony/twilio/status/${run.id + 1}`, form));
    expect(replayed.status).toBe(403);
    expect((await twilioPost(`/telephony/twilio/answer/${run.id}`, form, 'AAAA')).status).toBe(403);
    expect((await runOf(run.id)).status).toBe('queued');
  });

  it('ends a call answered by a machine as voicemail (AMD), hanging up at the answer URL', async () => {
    const { run, callSid } = await placeOutbound('+15557654323', true);
    expect(fake.requests.filter((q) => q.path.endsWith('/Calls.json')).at(-1)?.form.MachineDetection).toBe('Enable');
    const base = { AccountSid: fake.accountSid, CallSid: callSid, Direction: 'outbound-api' };
    const answer = await twilioPost(`/telephony/twilio/answer/${run.id}`, { ...base, CallStatus: 'in-progress', AnsweredBy: 'machine_start' });
    expect(answer.text).toContain('<Hangup/>');
    expect(answer.text).not.toContain('<Stream');
    await twilioPost(`/telephony/twilio/status/${run.id}`, { ...base, CallStatus: 'in-progress', AnsweredBy: 'machine_start' });
    await twilioPost(`/telephony/twilio/status/${run.id}`, { ...base, CallStatus: 'completed', AnsweredBy: 'machine_start', CallDuration: '3' });
    expect(await runOf(run.id)).toMatchObject({ status: 'completed', disposition: 'voicemail' });
  });

  it('answers an inbound call to a bound number with <Connect><Stream>, and others with a polite hangup', async () => {
    const call = { AccountSid: fake.accountSid, CallSid: 'CA00000000000000000000000000000001', From: '+15559876543', To: BOUND, Direction: 'inbound', CallStatus: 'ringing' };
    const r = await twilioPost('/telephony/twilio/inbound', call);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/xml/);
    const m = /media\/(\d+)"/.exec(r.text);
    expect(r.text).toContain('<Connect><Stream url="wss://cp.example.test/api/v1/telephony/twilio/media/');
    const runId = Number(m?.[1]);
    expect(await runOf(runId)).toMatchObject({ status: 'queued', initial_context: { caller_number: '+15559876543', called_number: BOUND } });
    // The stream's status callback moves the inbound run.
    const stream = { AccountSid: fake.accountSid, CallSid: call.CallSid, StreamSid: 'MZ1', Timestamp: new Date().toISOString() };
    expect((await twilioPost(`/telephony/twilio/status/${runId}`, { ...stream, StreamEvent: 'stream-started' })).status).toBe(200);
    expect((await runOf(runId)).status).toBe('in_progress');
    await twilioPost(`/telephony/twilio/status/${runId}`, { ...stream, StreamEvent: 'stream-stopped' });
    expect(await runOf(runId)).toMatchObject({ status: 'completed', disposition: 'completed' });

    // A number of the account that is not bound to a workflow.
    const refused = await twilioPost('/telephony/twilio/inbound', { ...call, CallSid: 'CA00000000000000000000000000000002', To: UNBOUND });
    expect(refused.status).toBe(200);
    expect(refused.text).toMatch(/<Response><Say>[^<]+<\/Say><Hangup\/><\/Response>$/);
    // A forged inbound call to the bound number.
    const forged = await twilioPost('/telephony/twilio/inbound', { ...call, CallSid: 'CA00000000000000000000000000000003' }, 'forged');
    expect(forged.status).toBe(403);
  });

  it('unbinding clears the voice webhook on Twilio', async () => {
    const list = await svc.get(`/organizations/telephony-configs/${configId}/phone-numbers`, auth);
    const bound = list.body.phone_numbers.find((n: { address_normalized: string }) => n.address_normalized === BOUND);
    const r = await svc.put(`/organizations/telephony-configs/${configId}/phone-numbers/${bound.id}`, { clear_inbound_workflow: true }, auth);
    expect(r.status).toBe(200);
    expect(r.body.provider_sync).toMatchObject({ ok: true });
    expect([...fake.numbers.values()].find((n) => n.phoneNumber === BOUND)?.voiceUrl).toBe('');
  });
});
