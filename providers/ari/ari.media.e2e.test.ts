/**
 * ARI media end to end: the running service with an ARI configuration whose `ws_client_name` is a
 * websocket_client.conf connection of the fake Asterisk pointing at the service's own media endpoint. An
 * answered call gets a bridge and an external media channel; the fake, acting as chan_websocket, connects with
 * the run id and its real media token, streams caller audio that lands in the run's recording and receives what
 * the service plays; the ends of the call tear the bridge and the media channel down.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { CallUrls } from '../../core/calls/call-urls.js';
import { RunRepository } from '../../core/ports/run.repository.port.js';
import { TelephonyConfigurationRepository } from '../../core/ports/telephony-configuration.repository.port.js';
import { ProviderInstances } from '../../core/telephony/provider-instances.js';
import { noticeTonesMulaw } from '../../core/voice/notice-tones.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { ProviderRegistry } from '../../plugins/provider-registry.js';
import { FakeAriServer } from '../../test/fakes/ari/fake-ari-server.js';
import { startTestService, type TestService } from '../../test/support/test-service.js';
import { createAriPlugin } from './index.js';
import { until as waitUntil } from '../../test/support/until.js';

const APP = 'callplane';
const PASSWORD = 'ari-media-e2e-password';
const CONNECTION = 'callplane-media';

/** Media round trips through the fake Asterisk take longer: 8 s unless told. */
const until = (what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 8000) => waitUntil(what, cond, timeoutMs);

describe('ARI call media through the running service', () => {
  let fake: FakeAriServer;
  let svc: TestService;
  let dataDir: string;
  let auth: { token: string };
  let organizationId: number;
  let workflowId: number;
  let configId: number;

  const runOf = async (runId: number) => (await svc.get(`/workflow/${workflowId}/runs/${runId}`, auth)).body;

  /** The recorded caller audio of a run (the μ-law WAV's data chunk). */
  async function recordedAudio(recordingUrl: string): Promise<Buffer> {
    const u = new URL(recordingUrl);
    const res = await fetch(svc.url + u.pathname + u.search);
    expect(res.status).toBe(200);
    const wav = Buffer.from(await res.arrayBuffer());
    const at = wav.indexOf('data', 12, 'latin1');
    return wav.subarray(at + 8, at + 8 + wav.readUInt32LE(at + 4));
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'callplane-ari-media-'));
    fake = await FakeAriServer.start({ username: APP, password: PASSWORD });
    const ari = createAriPlugin({ client: { reconnect: { initialDelayMs: 20, maxDelayMs: 200, jitter: false }, pingIntervalMs: 0 } });
    svc = await startTestService({ env: { CALLPLANE_DATA_DIR: dataDir }, providers: ProviderRegistry.builtIn({ allowPrivateNetwork: true }, [ari]) });
    // websocket_client.conf: [callplane-media] uri = ws://<service>/api/v1/telephony/ari/media
    fake.websocketClients.set(CONNECTION, `${svc.url.replace(/^http/, 'ws')}/api/v1/telephony/ari/media`);
    const user = await svc.signup();
    auth = { token: user.token };
    organizationId = user.organizationId;
    workflowId = (await svc.post('/workflow/create/definition', { name: 'Front desk', workflow_definition: exampleWorkflowDefinition }, auth)).body.id;
    const cfg = await svc.post('/organizations/telephony-configs', {
      name: 'Asterisk', config: { provider: 'ari', ari_endpoint: fake.url, app_name: APP, app_password: PASSWORD, ws_client_name: CONNECTION, dial_template: 'PJSIP/{number}@trunk' },
    }, auth);
    expect(cfg.status).toBe(200);
    configId = cfg.body.id;
    expect((await svc.post(`/organizations/telephony-configs/${configId}/phone-numbers`, { address: '1000', inbound_workflow_id: workflowId }, auth)).status).toBe(200);
    await until('event socket', () => fake.connectedApps.some((apps) => apps.includes(APP)));
  });
  afterAll(async () => {
    await svc?.close();
    await fake?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('inbound: caller audio is recorded, the agent\'s audio (the no-agent notice) reaches Asterisk, and its hang-up ends the call and tears down', async () => {
    fake.simulateInbound({ channelId: 'media-e2e-in', callerNumber: '+15559876543', dialedExten: '1000', app: APP });
    await until('media connected', () => fake.mediaLegs.get('media-e2e-in-media')?.connected === true);
    const leg = fake.mediaLegs.get('media-e2e-in-media')!;
    const runId = Number(new URL(leg.url).searchParams.get('run_id'));
    // the run's own token, as CallUrls signs it for the ari media endpoint
    expect(leg.url).toMatch(new RegExp(`/api/v1/telephony/ari/media\\?run_id=${runId}&token=\\d+\\.[0-9a-f]{64}$`));
    await until('bridged', () => fake.bridges.get('media-e2e-in-bridge')?.channels.length === 2);

    const caller = randomBytes(25 * 160);
    leg.sendAudio(caller);

    // no llm/stt/tts on this workflow: the service plays its notice over the media channel, fails the run, hangs up
    const notice = noticeTonesMulaw();
    await until('notice at Asterisk', () => leg.receivedBytes >= notice.length);
    expect(Buffer.concat(leg.received).subarray(0, notice.length).equals(Buffer.from(notice))).toBe(true);
    await until('caller hung up', () => !fake.channels.has('media-e2e-in'), 10_000);
    await until('torn down', () => !fake.channels.has('media-e2e-in-media') && !fake.bridges.has('media-e2e-in-bridge'));
    expect(leg.commands).toContain('HANGUP');

    await until('recorded', async () => (await runOf(runId)).recording_url !== null);
    const run = await runOf(runId);
    expect(run).toMatchObject({ status: 'failed', disposition: 'agent_not_configured' });
    expect(run.annotations.media_stream).toMatchObject({ provider: 'ari', inbound_bytes: caller.length, recorded_bytes: caller.length });
    expect((await recordedAudio(run.recording_url)).equals(caller)).toBe(true);
  });

  it('outbound: media is bridged on answer; the caller hanging up ends the media stream and the recording', async () => {
    const workflow = (await svc.get(`/workflow/${workflowId}`, auth)).body;
    const to = '+15557654321';
    const run = await svc.container.get<RunRepository>(RunRepository).create(organizationId, {
      workflowId, definitionId: workflow.current_definition_id, name: `Call ${to}`, mode: 'outbound', telephonyConfigurationId: configId,
      provider: 'ari', calledNumber: to, callerNumber: '1000', initialContext: { called_number: to }, now: new Date(),
    });
    const configuration = await svc.container.get<TelephonyConfigurationRepository>(TelephonyConfigurationRepository).findForProviderEvent(configId);
    const provider = svc.container.get<ProviderInstances>(ProviderInstances).forConfiguration(configuration!);
    const callId = `attempt-${run.id}`;
    await provider.placeCall({
      attemptKey: callId, organizationId, runId: run.id, to, from: '1000',
      ...svc.container.get(CallUrls).forCall('ari', run.id), machineDetection: false, ringTimeoutSeconds: 30,
    });
    fake.simulateRinging(callId);
    expect(fake.mediaLegs.has(`${callId}-media`)).toBe(false); // not before the answer
    fake.simulateAnswer(callId);
    await until('media connected', () => fake.mediaLegs.get(`${callId}-media`)?.connected === true);
    await until('bridged', () => fake.bridges.get(`${callId}-bridge`)?.channels.length === 2);
    const leg = fake.mediaLegs.get(`${callId}-media`)!;
    expect(leg.url).toContain(`/api/v1/telephony/ari/media?run_id=${run.id}&token=`);

    const caller = randomBytes(10 * 160);
    leg.sendAudio(caller);
    await until('audio received', async () => (await runOf(run.id)).status === 'in_progress' && leg.receivedBytes > 0);
    fake.simulateHangup(callId, 16);
    await until('torn down', () => !fake.channels.has(`${callId}-media`) && !fake.bridges.has(`${callId}-bridge`));
    await until('recorded', async () => (await runOf(run.id)).recording_url !== null);
    const done = await runOf(run.id);
    expect(done).toMatchObject({ status: 'completed', disposition: 'completed' });
    expect(done.annotations.media_stream).toMatchObject({ provider: 'ari', recorded_bytes: caller.length });
    expect((await recordedAudio(done.recording_url)).equals(caller)).toBe(true);
  });
});
