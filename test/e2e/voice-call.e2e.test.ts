/**
 * Calls that talk, end to end through the running service (API.md 11 and 13; docs/voice.md "Making calls talk"):
 * the example dental agent on an `openai` AI service served by the fake OpenAI server (chat, /audio/transcriptions,
 * /audio/speech), the energy VAD (the fake's speech is tone bursts, which Silero rightly does not call speech).
 * (a) a simulator inbound call with a caller script: greeting → turns → endCall, and what the run gets;
 * (b) a Twilio media stream driven by a loopback WebSocket client speaking Twilio's media JSON, with a barge-in;
 * (c) an inbound Twilio call to an agent that cannot talk: a notice, then `failed` / `agent_not_configured`.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { readWav } from '../../core/voice/wav.js';
import { ProviderRegistry } from '../../plugins/provider-registry.js';
import ari from '../../providers/ari/index.js';
import openaiPlugin from '../../providers/openai/index.js';
import simulator from '../../providers/simulator/index.js';
import { createTwilioPlugin } from '../../providers/twilio/index.js';
import { computeTwilioSignature } from '../../providers/twilio/twilio-signature.js';
import { FakeOpenAiServer } from '../fakes/openai/fake-openai-server.js';
import { FakeTwilioServer } from '../fakes/twilio/fake-twilio-server.js';
import { audioFixtureManifest, readAudioFixture } from '../fixtures/audio/fixtures.js';
import { TwilioMediaCaller } from '../fakes/twilio/twilio-media-caller.js';
import { startTestService, type Credentials, type TestService } from '../support/test-service.js';
import { DANA_CALLER_LINES, DANA_CONFIRMS_TRANSCRIPT, scriptDanaConfirms } from './dana-confirms.js';

const PUBLIC = 'https://cp.example.test';
const API_KEY = 'sk-test-voice-3c9a';
const SIM_NUMBER = '+15550004444';
const TWILIO_NUMBER = '+15550005555';
const TWILIO_SILENT_NUMBER = '+15550006666';
const DANA = { first_name: 'Dana', appointment_time: 'Tuesday at 3pm' };

let svc: TestService;
let openai: FakeOpenAiServer;
let twilio: FakeTwilioServer;
let dataDir: string;
let auth: Credentials;
let serviceId: number;
let talkingWorkflow: number;
let silentWorkflow: number;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 12_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v).slice(0, 600)}`);
    await sleep(50);
  }
}

async function download(url: string): Promise<Buffer> {
  const u = new URL(url);
  const r = await fetch(svc.url + u.pathname + u.search);
  expect(r.status).toBe(200);
  return Buffer.from(await r.arrayBuffer());
}

function wavHeader(buf: Buffer) {
  expect(buf.toString('ascii', 0, 4)).toBe('RIFF');
  const fmt = buf.indexOf('fmt ', 12, 'ascii') + 8;
  return { format: buf.readUInt16LE(fmt), channels: buf.readUInt16LE(fmt + 2), sampleRate: buf.readUInt32LE(fmt + 4), bitsPerSample: buf.readUInt16LE(fmt + 14), length: buf.length };
}

let callCounter = 0;
/** An inbound Twilio call as Twilio places it, then its media stream opened by a loopback caller. */
async function twilioCall(to: string): Promise<{ runId: number; caller: TwilioMediaCaller }> {
  const callSid = `CA${String(++callCounter).padStart(32, '7')}`;
  const r = await twilioPost('/telephony/twilio/inbound', { AccountSid: twilio.accountSid, CallSid: callSid, From: '+15559876543', To: to, Direction: 'inbound', CallStatus: 'ringing' });
  expect(r.status).toBe(200);
  const url = /<Stream url="([^"]+)"/.exec(r.text)![1]!;
  const parameters = Object.fromEntries([...r.text.matchAll(/<Parameter name="([^"]+)" value="([^"]+)"\/>/g)].map((m) => [m[1]!, m[2]!]));
  const caller = await TwilioMediaCaller.connect({ url: svc.url.replace(/^http/, 'ws') + new URL(url).pathname, callSid, parameters });
  return { runId: Number(parameters.run_id), caller };
}

async function twilioPost(path: string, form: Record<string, string>) {
  const url = `/api/v1${path}`;
  return svc.request('POST', url, {
    rawBody: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': computeTwilioSignature(twilio.authToken, PUBLIC + url, form) },
  });
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'callplane-voice-'));
  openai = await FakeOpenAiServer.start({ apiKey: API_KEY, speech: { msPerChar: 20 } });
  twilio = await FakeTwilioServer.start({ numbers: [{ phoneNumber: TWILIO_NUMBER }, { phoneNumber: TWILIO_SILENT_NUMBER }] });
  const providers = ProviderRegistry.builtIn({ allowPrivateNetwork: true }, [ari, createTwilioPlugin({ apiBaseUrl: twilio.url, client: { sleep: async () => undefined } }), simulator, openaiPlugin]);
  svc = await startTestService({
    env: { CALLPLANE_PUBLIC_URL: PUBLIC, CALLPLANE_DATA_DIR: dataDir, CALLPLANE_ALLOW_PRIVATE_NETWORK: 'true', CALLPLANE_VOICE_VAD: 'energy' },
    providers,
  });
  auth = { token: (await svc.signup()).token };
  const ai = await svc.post('/organizations/ai-services', { name: 'Fake OpenAI', config: { provider: 'openai', api_key: API_KEY, base_url: openai.baseUrl } }, auth);
  expect(ai.status).toBe(200);
  serviceId = ai.body.id;
  const talking = await svc.post('/workflow/create/definition', {
    name: 'Dental (voice)', workflow_definition: exampleWorkflowDefinition, template_context_variables: DANA,
    workflow_configurations: {
      llm: { service_id: serviceId, model: 'gpt-4o-mini' }, stt: { service_id: serviceId, model: 'whisper-1' },
      tts: { service_id: serviceId, voice: 'alloy', model: 'tts-1' }, user_idle_timeout_seconds: 10,
    },
  }, auth);
  expect(talking.status).toBe(200);
  talkingWorkflow = talking.body.id;
  const silent = await svc.post('/workflow/create/definition', { name: 'Dental (no models)', workflow_definition: exampleWorkflowDefinition }, auth);
  silentWorkflow = silent.body.id;

  const sim = await svc.post('/organizations/telephony-configs', { name: 'Sim', config: { provider: 'simulator', account_id: 'voice-sim' } }, auth);
  expect(sim.status).toBe(200);
  expect((await svc.post(`/organizations/telephony-configs/${sim.body.id}/phone-numbers`, { address: SIM_NUMBER, inbound_workflow_id: talkingWorkflow }, auth)).status).toBe(200);
  const tw = await svc.post('/organizations/telephony-configs', { name: 'Twilio', config: { provider: 'twilio', account_sid: twilio.accountSid, auth_token: twilio.authToken } }, auth);
  expect(tw.status).toBe(200);
  expect((await svc.post(`/organizations/telephony-configs/${tw.body.id}/phone-numbers`, { address: TWILIO_NUMBER, inbound_workflow_id: talkingWorkflow }, auth)).status).toBe(200);
  expect((await svc.post(`/organizations/telephony-configs/${tw.body.id}/phone-numbers`, { address: TWILIO_SILENT_NUMBER, inbound_workflow_id: silentWorkflow }, auth)).status).toBe(200);
}, 30_000);

afterAll(async () => {
  if (process.env.VOICE_TEST_LOGS) console.log(JSON.stringify(openai.speech.requests.map((r) => [r.path, r.status, r.fields.input ?? r.wav])), JSON.stringify(openai.requests.map((r) => [r.path, r.status])));
  if (process.env.VOICE_TEST_LOGS) console.log(svc.logs.filter((l) => /voice|simulated|media|call/.test(l) && !l.includes('"msg":"request"')).slice(-80).join('\n'));
  await svc?.close();
  await openai?.close();
  await twilio?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('calls that talk', () => {
  it('(a) a simulator call with a caller script runs the dental agent from greeting to endCall; the run gets transcript, stereo recording, context, disposition, tokens, turn logs and metrics', async () => {
    scriptDanaConfirms(openai);
    const started = Date.now();
    const r = await svc.post('/telephony/simulator/inbound', {
      account_id: 'voice-sim', from: '+15551230000', to: SIM_NUMBER, caller: { lines: DANA_CALLER_LINES },
    }, auth);
    expect(r.status).toBe(200);
    const runId = r.body.run_id as number;
    const run = await waitFor('the run to complete', async () => (await svc.get(`/workflow/${talkingWorkflow}/runs/${runId}`, auth)).body,
      (b) => b.status === 'completed' || b.status === 'failed');
    expect(Date.now() - started).toBeLessThan(14_000);
    expect(run).toMatchObject({
      status: 'completed', disposition: 'appointment_confirmed',
      gathered_context: { will_attend: true, mapped_call_disposition: 'appointment_confirmed' },
    });
    expect(typeof run.gathered_context.will_attend).toBe('boolean');
    expect(run.cost_info.service_token_usage).toBeGreaterThan(0);

    const transcript = JSON.parse((await download(run.transcript_url)).toString('utf8'));
    const said = transcript.turns.map((t: { role: string; text: string }) => `${t.role}: ${t.text}`);
    // only what the caller heard, one entry per reply piece, in order
    expect(said).toEqual(DANA_CONFIRMS_TRANSCRIPT);
    expect(transcript.turns.map((t: { node_id: string }) => t.node_id)).toEqual(['start', 'start', 'start', 'confirm', 'confirm', 'end_confirmed']);
    for (const t of transcript.turns) expect(t).toEqual(expect.objectContaining({ node_id: expect.any(String), start_ms: expect.any(Number), end_ms: expect.any(Number), interrupted: false }));

    const file = await download(run.recording_url);
    const wav = wavHeader(file);
    expect(wav).toMatchObject({ format: 1, channels: 2, sampleRate: 8000, bitsPerSample: 16 });
    expect(run.recording_url).toContain('/call.wav');
    // streamed while the call lasted: the header written at the end has the final sizes, both legs carry audio
    const decoded = readWav(new Uint8Array(file));
    expect(decoded.data.length).toBe(file.length - 44);
    expect(file.readUInt32LE(4)).toBe(file.length - 8);
    const loud = (leg: 0 | 1) => decoded.samples.filter((v, i) => i % 2 === leg && Math.abs(v) > 500).length;
    expect([loud(0) > 8000, loud(1) > 8000]).toEqual([true, true]);
    // and nothing of the streaming is left behind (the part object, temporary files)
    const leftovers = readdirSync(join(dataDir, 'files', 'objects', 'runs'), { recursive: true }).map(String).filter((f) => /\.(part|tmp)$/.test(f) || f.includes('.part.'));
    expect(leftovers).toEqual([]);

    const events = (run.logs.entries as Array<{ event: string; details?: Record<string, unknown> }>).map((l) => l.event);
    expect(events).toEqual(expect.arrayContaining(['node_entered', 'variables_extracted', 'turn']));
    const turns = (run.logs.entries as Array<{ event: string; details?: Record<string, unknown> }>).filter((l) => l.event === 'turn');
    expect(turns.length).toBeGreaterThanOrEqual(2);
    expect(turns[0]!.details).toEqual(expect.objectContaining({ end_of_speech_to_first_audio: expect.any(Number), stt: expect.any(Number), llm_first_token: expect.any(Number), tts_first_audio: expect.any(Number) }));

    const metrics = await svc.get(`/workflow/${talkingWorkflow}/runs/${runId}/metrics`, auth);
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatchObject({ run_id: runId, turns: turns.length, interruptions: 0, latency_p50_ms: expect.any(Number), latency_p95_ms: expect.any(Number) });
    expect(metrics.body.entries).toHaveLength(turns.length);
    const other = await svc.signup();
    const hidden = await svc.get(`/workflow/${talkingWorkflow}/runs/${runId}/metrics`, { token: other.token });
    expect(hidden.status).toBe(404);
    expect(hidden.body.code).toBe('run_not_found');
    expect(svc.logs.join('\n')).not.toContain(API_KEY);
  }, 20_000);
  it('(b) a Twilio media stream talks, and speech over the greeting is cut within 100 ms of interruption_min_speech_ms: a clear, only the heard words in the transcript', async () => {
    const speech = readAudioFixture('barge-in-long').data;
    // the utterance after its lead silence, about 1.2 s of it
    const lead = (audioFixtureManifest.lead_ms * 8000) / 1000;
    const utterance = speech.subarray(lead, lead + 8000 * 1.2);
    openai.speech.transcribeAs('Sorry to interrupt, I need to move my appointment.');
    openai.reply({ text: 'Of course, when would suit you?' });
    const { runId, caller } = await twilioCall(TWILIO_NUMBER);
    try {
      await caller.until('the greeting to start', () => caller.agentVoiceAt.length > 0);
      await new Promise((r) => setTimeout(r, 200));
      const line = caller.speak(utterance);
      await caller.until('a clear', () => caller.clearsAt.length > 0, 3000);
      const onset = caller.spoke[line]!.onsetMs!;
      const reaction = caller.clearsAt[0]! - onset;
      expect(reaction).toBeGreaterThanOrEqual(300 - 40);
      expect(reaction).toBeLessThanOrEqual(300 + 100);
      // the reply to what the caller said comes after its speech ended
      await caller.until('the reply', () => caller.spoke[line]!.endMs !== null && caller.agentVoiceAt.some((t) => t > caller.spoke[line]!.endMs!), 6000);
      await new Promise((r) => setTimeout(r, 300));
      await caller.hangUp();
      await caller.closed;
    } finally {
      caller.close();
    }
    const run = await waitFor('the run\'s transcript', async () => (await svc.get(`/workflow/${talkingWorkflow}/runs/${runId}`, auth)).body, (b) => b.transcript_url !== null);
    const transcript = JSON.parse((await download(run.transcript_url)).toString('utf8'));
    const [greeting, user] = transcript.turns;
    expect(greeting).toMatchObject({ role: 'assistant', node_id: 'start', interrupted: true });
    const full = 'Hi, this is Ava from Brightsmile Dental. Am I speaking with Dana?';
    expect(full.startsWith(greeting.text)).toBe(true);
    expect(greeting.text.length).toBeLessThan(full.length);
    expect(user).toMatchObject({ role: 'user', text: 'Sorry to interrupt, I need to move my appointment.' });
    expect(wavHeader(await download(run.recording_url)).channels).toBe(2);
    const metrics = (await svc.get(`/workflow/${talkingWorkflow}/runs/${runId}/metrics`, auth)).body;
    expect(metrics.interruptions).toBe(1);
    expect(metrics.turns).toBeGreaterThanOrEqual(1);
  }, 15_000);

  it('(d) the greeting of an inbound Twilio call is synthesized while it rings: by the stream\'s start it is ready, and it is what the caller hears', async () => {
    const callSid = `CA${String(++callCounter).padStart(32, '7')}`;
    const speechRequests = () => openai.speech.requests.filter((r) => r.path === '/v1/audio/speech').map((r) => r.fields.input);
    const before = speechRequests().length;
    const r = await twilioPost('/telephony/twilio/inbound', { AccountSid: twilio.accountSid, CallSid: callSid, From: '+15559876543', To: TWILIO_NUMBER, Direction: 'inbound', CallStatus: 'ringing' });
    expect(r.status).toBe(200);
    // no media stream yet: the greeting's pieces are synthesized meanwhile
    await waitFor('the greeting\'s synthesis', async () => speechRequests().slice(before), (texts) => texts.length === 2);
    expect(speechRequests().slice(before)).toEqual(['Hi, this is Ava from Brightsmile Dental.', 'Am I speaking with Dana?']);
    const url = /<Stream url="([^"]+)"/.exec(r.text)![1]!;
    const parameters = Object.fromEntries([...r.text.matchAll(/<Parameter name="([^"]+)" value="([^"]+)"\/>/g)].map((m) => [m[1]!, m[2]!]));
    const caller = await TwilioMediaCaller.connect({ url: svc.url.replace(/^http/, 'ws') + new URL(url).pathname, callSid, parameters });
    try {
      await caller.until('the greeting to start', () => caller.agentVoiceAt.length > 0);
      await caller.until('the greeting to end', () => caller.agentVoiceAt.length > 0 && performance.now() - caller.agentVoiceAt.at(-1)! > 600, 8000);
      expect(speechRequests().length).toBe(before + 2); // played from the prepared audio: not synthesized again
      await caller.hangUp();
      await caller.closed;
    } finally {
      caller.close();
    }
    const runId = Number(parameters.run_id);
    const run = await waitFor('the run\'s transcript', async () => (await svc.get(`/workflow/${talkingWorkflow}/runs/${runId}`, auth)).body, (b) => b.transcript_url !== null);
    const transcript = JSON.parse((await download(run.transcript_url)).toString('utf8'));
    expect(transcript.turns[0]).toMatchObject({ role: 'assistant', node_id: 'start', text: 'Hi, this is Ava from Brightsmile Dental. Am I speaking with Dana?' });
  }, 20_000);

  it('(c) an inbound Twilio call to an agent without llm, stt and tts hears a short notice and ends; its run fails with agent_not_configured', async () => {
    const speechRequests = openai.speech.requests.length;
    const { runId, caller } = await twilioCall(TWILIO_SILENT_NUMBER);
    try {
      const closed = await caller.closed;
      expect(closed.code).toBe(1000);
    } finally {
      caller.close();
    }
    // the notice: about two seconds of tones
    expect(caller.agentVoiceAt.length).toBeGreaterThan(50);
    const run = (await svc.get(`/workflow/${silentWorkflow}/runs/${runId}`, auth)).body;
    expect(run).toMatchObject({ status: 'failed', disposition: 'agent_not_configured', gathered_context: { mapped_call_disposition: 'agent_not_configured' } });
    expect(run.transcript_url).toBeNull();
    expect(openai.speech.requests.length).toBe(speechRequests); // tones, no speech service
  }, 15_000);

  it('a malformed caller script is 422 at body.caller, and no run is created', async () => {
    const before = (await svc.get(`/workflow/${talkingWorkflow}/runs`, auth)).body.total_count;
    for (const caller of [{ lines: 'hello' }, { lines: [''] }, { lines: [] }, 'yes']) {
      const r = await svc.post('/telephony/simulator/inbound', { account_id: 'voice-sim', from: '+15551230000', to: SIM_NUMBER, caller }, auth);
      expect(r.status).toBe(422);
      expect(r.body.detail[0].loc).toEqual(['body', 'caller']);
    }
    expect((await svc.get(`/workflow/${talkingWorkflow}/runs`, auth)).body.total_count).toBe(before);
  });
});
