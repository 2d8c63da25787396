/**
 * A simulator campaign whose telephony configuration brings a simulated caller (`caller_lines`, API.md 13 and
 * docs/api.md "Deviations"): the outbound call the campaign engine places is answered by the scripted caller, who
 * talks with the example dental agent through the fake OpenAI server from greeting to endCall; the run gets the
 * conversation's disposition, context, transcript and recording, and the campaign completes.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { ProviderRegistry } from '../../plugins/provider-registry.js';
import openaiPlugin from '../../providers/openai/index.js';
import simulator from '../../providers/simulator/index.js';
import { FakeOpenAiServer } from '../fakes/openai/fake-openai-server.js';
import { startTestService, type Credentials, type TestService } from '../support/test-service.js';
import { uploadCsv, waitFor } from './campaign-support.js';
import { DANA_CALLER_LINES, DANA_CONFIRMS_TRANSCRIPT, scriptDanaConfirms } from './dana-confirms.js';

const API_KEY = 'sk-test-sim-campaign-71d2';

let svc: TestService;
let openai: FakeOpenAiServer;
let dataDir: string;
let auth: Credentials;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'callplane-sim-caller-'));
  openai = await FakeOpenAiServer.start({ apiKey: API_KEY, speech: { msPerChar: 20 } });
  const providers = ProviderRegistry.builtIn({ allowPrivateNetwork: true }, [simulator, openaiPlugin]);
  svc = await startTestService({
    env: { CALLPLANE_DATA_DIR: dataDir, CALLPLANE_ALLOW_PRIVATE_NETWORK: 'true', CALLPLANE_VOICE_VAD: 'energy' },
    providers,
  });
  auth = { token: (await svc.signup()).token };
}, 30_000);

afterAll(async () => {
  await svc?.close();
  await openai?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('a simulator campaign with a configured caller', () => {
  it('places the call, the scripted caller talks with the agent to its endCall, and the run and campaign complete', async () => {
    const ai = await svc.post('/organizations/ai-services', { name: 'Fake OpenAI', config: { provider: 'openai', api_key: API_KEY, base_url: openai.baseUrl } }, auth);
    expect(ai.status).toBe(200);
    const sid = ai.body.id as number;
    const wf = await svc.post('/workflow/create/definition', {
      name: 'Dental (campaign voice)', workflow_definition: exampleWorkflowDefinition, template_context_variables: { appointment_time: 'Tuesday at 3pm' },
      workflow_configurations: {
        llm: { service_id: sid, model: 'gpt-4o-mini' }, stt: { service_id: sid, model: 'whisper-1' },
        tts: { service_id: sid, voice: 'alloy', model: 'tts-1' }, user_idle_timeout_seconds: 10,
      },
    }, auth);
    expect(wf.status).toBe(200);
    const config = await svc.post('/organizations/telephony-configs', {
      name: 'Sim with caller', is_default_outbound: true,
      config: { provider: 'simulator', ring_ms: 0, talk_ms: 0, caller_lines: DANA_CALLER_LINES },
    }, auth);
    expect(config.status).toBe(200);
    expect(config.body.credentials).toMatchObject({ caller_lines: DANA_CALLER_LINES, caller_persona: null });

    scriptDanaConfirms(openai);

    const key = await uploadCsv(svc, auth, 'phone_number,first_name\n+15550007712,Dana\n');
    const created = await svc.post('/campaign/create', {
      name: 'Reminders', workflow_id: wf.body.id, source_type: 'csv', source_id: key, max_concurrency: 1, retry_config: { enabled: false },
    }, auth);
    expect(created.status).toBe(200);
    const id = created.body.id as number;
    expect((await svc.post(`/campaign/${id}/start`, undefined, auth)).status).toBe(200);
    await waitFor(async () => (await svc.get(`/campaign/${id}`, auth)).body.state === 'completed', 20_000, 50);

    const runs = await svc.get(`/campaign/${id}/runs`, auth);
    expect(runs.body.total_count).toBe(1);
    const runId = runs.body.runs[0].id as number;
    const run = (await svc.get(`/workflow/${wf.body.id}/runs/${runId}`, auth)).body;
    expect(run).toMatchObject({
      status: 'completed', disposition: 'appointment_confirmed',
      gathered_context: { will_attend: true, mapped_call_disposition: 'appointment_confirmed' },
    });
    expect(run.cost_info.service_token_usage).toBeGreaterThan(0);
    const t = await fetch(svc.url + new URL(run.transcript_url).pathname + new URL(run.transcript_url).search);
    const said = ((await t.json()) as { turns: Array<{ role: string; text: string }> }).turns.map((x) => `${x.role}: ${x.text}`);
    expect(said).toEqual(DANA_CONFIRMS_TRANSCRIPT);
    expect(run.recording_url).toContain('/call.wav');
    const events = (run.logs.entries as Array<{ event: string }>).map((l) => l.event);
    expect(events).toEqual(expect.arrayContaining(['node_entered', 'variables_extracted', 'turn', 'conversation_recorded', 'call_completed']));
  }, 30_000);
});
