/**
 * The carrier's answering-machine verdict reaches the live voice session (docs/voicemail.md "The carrier's
 * detection and ours"), end to end on Twilio through the running service: an outbound call placed with
 * `asyncMachineDetection` asks Twilio for async AMD (`DetectMessageEnd`, `AsyncAmd`, the run's status URL), the
 * answer URL connects the media stream (a loopback caller speaking Twilio's media JSON, saying nothing), and the
 * signed `AsyncAmdStatusCallback` (AnsweredBy, no CallStatus) goes through the one status path to the session:
 *  - `machine_end_beep` with `leave_message`: the message is spoken at once and the run ends `voicemail_left`
 *    (kept when Twilio's completed callback reports the machine);
 *  - `machine_start` with `hangup`: the call ends `voicemail` without a word.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlaceOutboundCall } from '../../core/calls/place-outbound-call.use-case.js';
import { TelephonyConfigurationRepository } from '../../core/ports/telephony-configuration.repository.port.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { ProviderRegistry } from '../../plugins/provider-registry.js';
import openaiPlugin from '../../providers/openai/index.js';
import { createTwilioPlugin } from '../../providers/twilio/index.js';
import { computeTwilioSignature } from '../../providers/twilio/twilio-signature.js';
import { FakeOpenAiServer } from '../fakes/openai/fake-openai-server.js';
import { FakeTwilioServer } from '../fakes/twilio/fake-twilio-server.js';
import { TwilioMediaCaller } from '../fakes/twilio/twilio-media-caller.js';
import { startTestService, type Credentials, type TestService } from '../support/test-service.js';

const PUBLIC = 'https://cp.example.test';
const API_KEY = 'sk-test-amd-5e1f';
const FROM = '+15550008888';
const MESSAGE = 'Hi {{first_name}}, this is Ava from Brightsmile Dental. Please call us back.';

let svc: TestService;
let openai: FakeOpenAiServer;
let twilio: FakeTwilioServer;
let dataDir: string;
let auth: Credentials;
let organizationId: number;
let configId: number;
const workflows: Record<'leave_message' | 'hangup', { id: number; definitionId: number }> = {} as never;

async function twilioPost(path: string, form: Record<string, string>) {
  const url = `/api/v1${path}`;
  return svc.request('POST', url, {
    rawBody: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': computeTwilioSignature(twilio.authToken, PUBLIC + url, form) },
  });
}

async function waitFor<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v).slice(0, 600)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'callplane-amd-'));
  openai = await FakeOpenAiServer.start({ apiKey: API_KEY, speech: { msPerChar: 5 } });
  twilio = await FakeTwilioServer.start({ numbers: [{ phoneNumber: FROM }] });
  const providers = ProviderRegistry.builtIn({ allowPrivateNetwork: true }, [createTwilioPlugin({ apiBaseUrl: twilio.url, client: { sleep: async () => undefined } }), openaiPlugin]);
  svc = await startTestService({
    env: { CALLPLANE_PUBLIC_URL: PUBLIC, CALLPLANE_DATA_DIR: dataDir, CALLPLANE_ALLOW_PRIVATE_NETWORK: 'true', CALLPLANE_VOICE_VAD: 'energy' },
    providers,
  });
  const user = await svc.signup();
  auth = { token: user.token };
  organizationId = user.organizationId;
  const ai = await svc.post('/organizations/ai-services', { name: 'Fake OpenAI', config: { provider: 'openai', api_key: API_KEY, base_url: openai.baseUrl } }, auth);
  expect(ai.status).toBe(200);
  const sid = ai.body.id as number;
  for (const action of ['leave_message', 'hangup'] as const) {
    const wf = await svc.post('/workflow/create/definition', {
      name: `Dental (${action})`, workflow_definition: exampleWorkflowDefinition, template_context_variables: { appointment_time: 'Tuesday at 3pm' },
      workflow_configurations: {
        llm: { service_id: sid, model: 'gpt-4o-mini' }, stt: { service_id: sid, model: 'whisper-1' }, tts: { service_id: sid, voice: 'alloy', model: 'tts-1' },
        voicemail: { detect: true, action, message: MESSAGE },
      },
    }, auth);
    expect(wf.status).toBe(200);
    workflows[action] = { id: wf.body.id, definitionId: (await svc.get(`/workflow/${wf.body.id}`, auth)).body.current_definition_id };
  }
  const cfg = await svc.post('/organizations/telephony-configs', { name: 'Twilio', config: { provider: 'twilio', account_sid: twilio.accountSid, auth_token: twilio.authToken } }, auth);
  expect(cfg.status).toBe(200);
  configId = cfg.body.id;
}, 30_000);

afterAll(async () => {
  await svc?.close();
  await openai?.close();
  await twilio?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** Places the outbound call as the campaign engine does for an agent with voicemail.detect, answers it and opens its media stream. */
async function answeredCall(action: 'leave_message' | 'hangup', to: string) {
  const configuration = await svc.container.get<TelephonyConfigurationRepository>(TelephonyConfigurationRepository).get(organizationId, configId);
  const placed = await svc.container.get(PlaceOutboundCall).execute({
    configuration: configuration!, workflowId: workflows[action].id, definitionId: workflows[action].definitionId, name: `Call ${to}`, to, from: FROM,
    initialContext: { first_name: 'Dana', called_number: to }, machineDetection: action === 'hangup', asyncMachineDetection: true, ringTimeoutSeconds: 30,
  });
  if (placed.kind !== 'placed') throw new Error(`not placed: ${placed.kind}`);
  const runId = placed.run.id;
  const sent = twilio.requests.filter((q) => q.path.endsWith('/Calls.json')).at(-1)?.form;
  expect(sent).toMatchObject({
    MachineDetection: 'DetectMessageEnd', AsyncAmd: 'true', AsyncAmdStatusCallback: `${PUBLIC}/api/v1/telephony/twilio/status/${runId}`,
  });
  const base = { AccountSid: twilio.accountSid, CallSid: placed.providerCallId, From: FROM, To: to, Direction: 'outbound-api' };
  expect((await twilioPost(`/telephony/twilio/status/${runId}`, { ...base, CallStatus: 'in-progress' })).status).toBe(200);
  // async AMD: the answer URL has no verdict yet and connects the stream
  const answer = await twilioPost(`/telephony/twilio/answer/${runId}`, { ...base, CallStatus: 'in-progress' });
  const url = /<Stream url="([^"]+)"/.exec(answer.text)![1]!;
  const parameters = Object.fromEntries([...answer.text.matchAll(/<Parameter name="([^"]+)" value="([^"]+)"\/>/g)].map((m) => [m[1]!, m[2]!]));
  const caller = await TwilioMediaCaller.connect({ url: svc.url.replace(/^http/, 'ws') + new URL(url.replace(/&amp;/g, '&')).pathname + new URL(url.replace(/&amp;/g, '&')).search, callSid: placed.providerCallId, parameters });
  return { runId, base, caller, status: `/telephony/twilio/status/${runId}`, workflowId: workflows[action].id };
}

describe('Twilio async AMD verdicts reach the live voice session', () => {
  it('machine_end_beep with leave_message: the message is spoken right after the beep and the run ends voicemail_left', async () => {
    const speechBefore = openai.speech.requests.length;
    const { runId, base, caller, status, workflowId } = await answeredCall('leave_message', '+15557650101');
    try {
      await new Promise((r) => setTimeout(r, 150));
      const amdAt = performance.now();
      const r = await twilioPost(status, { AccountSid: base.AccountSid, CallSid: base.CallSid, AnsweredBy: 'machine_end_beep', MachineDetectionDuration: '5200' });
      expect(r.status).toBe(200);
      await caller.until('the message', () => caller.agentVoiceAt.some((t) => t > amdAt), 4000);
      // well before our own detector's 4 s "no speech" timeout: the carrier's verdict decided
      expect(caller.agentVoiceAt.find((t) => t > amdAt)! - amdAt).toBeLessThan(2000);
      const closed = await caller.closed;
      expect(closed.code).toBe(1000);
    } finally {
      caller.close();
    }
    const spoken = openai.speech.requests.slice(speechBefore).map((q) => q.fields.input).filter(Boolean);
    expect(spoken.join(' ')).toBe('Hi Dana, this is Ava from Brightsmile Dental. Please call us back.');
    const during = await waitFor('the session\'s record', async () => (await svc.get(`/workflow/${workflowId}/runs/${runId}`, auth)).body, (b) => b.disposition === 'voicemail_left');
    const amdLog = during.logs.entries.find((l: { event: string }) => l.event === 'answering_machine_detection');
    expect(amdLog).toMatchObject({ details: expect.objectContaining({ verdict: 'machine' }) });
    expect(JSON.stringify(amdLog)).toContain('carrier');
    // Twilio's completed callback reports the machine: the left message stands
    expect((await twilioPost(status, { ...base, CallStatus: 'completed', CallDuration: '9', AnsweredBy: 'machine_end_beep' })).status).toBe(200);
    const run = (await svc.get(`/workflow/${workflowId}/runs/${runId}`, auth)).body;
    expect(run).toMatchObject({ status: 'completed', disposition: 'voicemail_left', gathered_context: { mapped_call_disposition: 'voicemail_left' } });
  }, 20_000);

  it('machine_start with hangup: the call ends voicemail without a word', async () => {
    const speechBefore = openai.speech.requests.length;
    const { runId, base, caller, status, workflowId } = await answeredCall('hangup', '+15557650102');
    try {
      await new Promise((r) => setTimeout(r, 150));
      const amdAt = Date.now();
      expect((await twilioPost(status, { AccountSid: base.AccountSid, CallSid: base.CallSid, AnsweredBy: 'machine_start' })).status).toBe(200);
      await caller.closed;
      expect(Date.now() - amdAt).toBeLessThan(2000);
    } finally {
      caller.close();
    }
    expect(openai.speech.requests.slice(speechBefore).filter((q) => q.fields.input)).toEqual([]);
    await waitFor('the session\'s record', async () => (await svc.get(`/workflow/${workflowId}/runs/${runId}`, auth)).body, (b) => b.disposition === 'voicemail');
    expect((await twilioPost(status, { ...base, CallStatus: 'completed', CallDuration: '3' })).status).toBe(200);
    const run = (await svc.get(`/workflow/${workflowId}/runs/${runId}`, auth)).body;
    expect(run).toMatchObject({ status: 'completed', disposition: 'voicemail' });
  }, 20_000);
});
