import { describe, expect, it } from '@jest/globals';
import { MemoryMediaChannel } from '../../test/fakes/memory-media-channel.js';
import { VirtualTimeline } from '../../test/fakes/virtual-timeline.js';
import { ScriptedLanguageModel } from '../../test/fakes/scripted-language-model.js';
import { ScriptedSpeechToText, ScriptedTextToSpeech } from '../../test/fakes/scripted-speech.js';
import { silentLogger } from '../ports/logger.port.js';
import type { NormalizedCallEvent } from '../ports/telephony-provider.port.js';
import type { Run } from '../runs/run.js';
import { EnergyVoiceActivityDetectorFactory } from '../voice/energy-vad.js';
import { PlayoutPacer } from '../voice/playout-pacer.js';
import { exampleWorkflowDefinition } from '../workflows/example-definition.js';
import { StartCallConversation } from './start-call-conversation.use-case.js';

const RUN = { id: 5, organizationId: 1, workflowId: 9, definitionId: 3, initialContext: {}, provider: 'twilio' } as unknown as Run;
const TALKING = { llm: { service_id: 1, model: 'm' }, stt: { service_id: 2 }, tts: { service_id: 3 } };

function setup(configurations: Record<string, unknown>, failModels = false) {
  const t = new VirtualTimeline();
  const order: string[] = [];
  const statuses: Array<{ provider: string; event: NormalizedCallEvent }> = [];
  const channel = new MemoryMediaChannel(t);
  const hangUp = channel.hangUp.bind(channel);
  channel.hangUp = async (reason: string) => {
    order.push(`hangup ${reason}`);
    await hangUp(reason);
  };
  const useCase = new StartCallConversation({
    runs: { get: async () => null, attachArtifacts: async () => null, applyStatus: async () => ({ applied: true, run: null }) },
    workflows: {
      get: async () => ({ workflowConfigurations: configurations, templateContextVariables: {} }) as never,
      getDefinition: async () => ({ definition: exampleWorkflowDefinition }) as never,
    },
    models: { forService: async () => { if (failModels) throw new Error('ai service 1 was deleted'); return null as never; } },
    speech: { stt: async () => null as never, tts: async () => null as never },
    vad: new EnergyVoiceActivityDetectorFactory(), pacer: new PlayoutPacer(t), timers: t, clock: t.clock, store: { put: async (key) => ({ key, size: 0, contentType: '' }), get: async () => null, delete: async () => undefined },
    applyStatus: {
      execute: async (provider, event) => {
        order.push(`status ${(event as { status: string }).status}`);
        statuses.push({ provider, event });
        return null;
      },
    },
    log: silentLogger,
  });
  return { t, channel, useCase, order, statuses };
}

describe('StartCallConversation', () => {
  it('on the simulator, an agent without llm, stt and tts leaves the call to the simulator\'s timers: nothing is played or applied', async () => {
    const s = setup({ llm: TALKING.llm });
    expect(await s.useCase.execute({ ...RUN, provider: 'simulator' }, s.channel, 'simulator')).toEqual({ kind: 'timers' });
    expect(s.channel.sent).toEqual([]);
    expect(s.order).toEqual([]);
  });

  it('on a real carrier, it plays the notice, fails the run agent_not_configured through the status path, and only then hangs up', async () => {
    const s = setup({});
    const started = s.useCase.execute(RUN, s.channel, 'twilio');
    await s.t.advance(100);
    const noticeBytes = s.channel.sent.reduce((n, f) => n + f.audio.length, 0);
    expect(noticeBytes).toBeGreaterThan(8000 * 1.5); // about two seconds of tones
    expect(noticeBytes % 160).toBe(0);
    expect(s.order).toEqual([]);
    await s.t.advance(3000);
    expect(await started).toEqual({ kind: 'refused', disposition: 'agent_not_configured' });
    expect(s.order).toEqual(['status failed', 'hangup agent_not_configured']);
    expect(s.statuses[0]).toMatchObject({ provider: 'twilio', event: { kind: 'status', runId: 5, status: 'failed', outcome: 'failed', disposition: 'agent_not_configured' } });
  });

  it('an agent whose services cannot be built (a deleted AI service) fails agent_unavailable after the notice', async () => {
    const s = setup(TALKING, true);
    const started = s.useCase.execute(RUN, s.channel, 'twilio');
    await s.t.advance(3100);
    expect(await started).toEqual({ kind: 'refused', disposition: 'agent_unavailable' });
    expect(s.statuses[0]!.event).toMatchObject({ status: 'failed', disposition: 'agent_unavailable', detail: expect.stringContaining('ai service 1 was deleted') });
    expect(s.order.at(-1)).toBe('hangup agent_unavailable');
  });
});

describe('StartCallConversation: answering-machine detection (docs/voicemail.md)', () => {
  function talking(mode: 'inbound' | 'outbound', voicemail: Record<string, unknown>) {
    const t = new VirtualTimeline();
    const channel = new MemoryMediaChannel(t);
    const tts = new ScriptedTextToSpeech({ sleep: t.sleep, firstAudioDelayMs: 50, msPerChar: 40 });
    const dispositions: Array<string | null | undefined> = [];
    const useCase = new StartCallConversation({
      runs: {
        get: async () => null,
        attachArtifacts: async () => null,
        applyStatus: async (_o: number, _id: number, update: { disposition?: string | null }) => {
          dispositions.push(update.disposition);
          return { applied: true, run: null };
        },
      } as never,
      workflows: {
        get: async () => ({ workflowConfigurations: { ...TALKING, voicemail }, templateContextVariables: { first_name: 'Dana' } }) as never,
        getDefinition: async () => ({ definition: exampleWorkflowDefinition }) as never,
      },
      models: { forService: async () => new ScriptedLanguageModel({ sleep: t.sleep }) },
      speech: { stt: async () => new ScriptedSpeechToText({ sleep: t.sleep, finalDelayMs: 100, interimEveryMs: 0 }), tts: async () => tts },
      vad: new EnergyVoiceActivityDetectorFactory(), pacer: new PlayoutPacer(t), timers: t, clock: t.clock, store: { put: async (key) => ({ key, size: 0, contentType: '' }), get: async () => null, delete: async () => undefined },
      applyStatus: { execute: async () => null },
      log: silentLogger,
    });
    return { t, channel, tts, dispositions, start: () => useCase.execute({ ...RUN, mode } as Run, channel, 'twilio') };
  }

  it('an outbound call of an agent with voicemail.detect waits for the decision; a long greeting ends it voicemail', async () => {
    const s = talking('outbound', { detect: true, action: 'hangup' });
    expect(await s.start()).toMatchObject({ kind: 'talking' });
    s.channel.startCaller();
    s.channel.speak(4000);
    await s.t.advance(1000);
    expect(s.tts.requests).toEqual([]);
    await s.t.until(() => s.channel.hangUps.length > 0, 10_000);
    expect(s.channel.hangUps[0]!.reason).toBe('voicemail');
    expect(s.dispositions).toContain('voicemail');
    expect(s.tts.requests).toEqual([]);
  });

  it('an inbound call, or an agent without detection, greets at once', async () => {
    for (const [mode, voicemail] of [['inbound', { detect: true, action: 'hangup' }], ['outbound', { detect: false }]] as const) {
      const s = talking(mode, voicemail);
      await s.start();
      s.channel.startCaller();
      await s.t.advance(100);
      expect(s.tts.requests.length).toBeGreaterThan(0);
    }
  });
});

describe('StartCallConversation: prepared while the call rings (docs/voice.md "First words")', () => {
  function talking(configurations: Record<string, unknown> = TALKING) {
    const t = new VirtualTimeline();
    const tts = new ScriptedTextToSpeech({ sleep: t.sleep, firstAudioDelayMs: 80, msPerChar: 40 });
    const reads: string[] = [];
    const useCase = new StartCallConversation({
      runs: { get: async () => null, attachArtifacts: async () => null, applyStatus: async () => ({ applied: true, run: null }) },
      workflows: {
        get: async () => {
          reads.push('workflow');
          return { workflowConfigurations: configurations, templateContextVariables: { first_name: 'Dana', appointment_time: 'Tuesday' } } as never;
        },
        getDefinition: async () => {
          reads.push('definition');
          return { definition: exampleWorkflowDefinition } as never;
        },
      },
      models: { forService: async () => new ScriptedLanguageModel({ sleep: t.sleep }) },
      speech: { stt: async () => new ScriptedSpeechToText({ sleep: t.sleep }), tts: async () => tts },
      vad: new EnergyVoiceActivityDetectorFactory(), pacer: new PlayoutPacer(t), timers: t, clock: t.clock,
      store: { put: async (key) => ({ key, size: 0, contentType: '' }), get: async () => null, delete: async () => undefined },
      applyStatus: { execute: async () => null },
      log: silentLogger,
    });
    return { t, tts, reads, useCase, channel: new MemoryMediaChannel(t) };
  }

  it('a prepared call\'s greeting was synthesized while it rang: its first frame goes out at the stream\'s start, nothing is read again', async () => {
    const s = talking();
    s.useCase.prepare(RUN);
    s.useCase.prepare(RUN); // a repeated webhook: once
    await s.t.advance(500); // ringing
    expect(s.tts.requests.map((r) => r.text)).toEqual(['Hi, this is Ava from Brightsmile Dental.', 'Am I speaking with Dana?']);
    const started = await s.useCase.execute(RUN, s.channel, 'twilio');
    expect(started.kind).toBe('talking');
    await s.t.advance(0);
    expect(s.channel.sent.length).toBeGreaterThan(0); // at once, not 80 ms (the TTS) later
    expect(s.reads).toEqual(['workflow', 'definition']);
    expect(s.tts.requests).toHaveLength(2);
    expect(s.useCase.preparedCount).toBe(0);
    s.channel.hangUpFromCaller();
    if (started.kind === 'talking') await started.session.ended;
  });

  it('an outbound call with answering-machine detection is prepared without its greeting: a machine never hears it', async () => {
    const s = talking({ ...TALKING, voicemail: { detect: true, action: 'hangup' } });
    s.useCase.prepare({ ...RUN, mode: 'outbound' } as Run);
    await s.t.advance(500);
    expect(s.tts.requests).toEqual([]);
    expect(s.useCase.preparedCount).toBe(1); // the services are ready all the same
    s.useCase.discard(RUN.id);
  });

  it('without preparation the greeting waits for the TTS; a preparation never used expires and its synthesis stops', async () => {
    const s = talking();
    await s.useCase.execute(RUN, s.channel, 'twilio');
    await s.t.advance(40);
    expect(s.channel.sent).toEqual([]);
    await s.t.advance(60);
    expect(s.channel.sent.length).toBeGreaterThan(0);

    const u = talking();
    u.useCase.prepare({ ...RUN, id: 6 });
    await u.t.advance(10);
    expect(u.useCase.preparedCount).toBe(1);
    await u.t.advance(120_000);
    expect(u.useCase.preparedCount).toBe(0);
    const discarded = talking();
    discarded.useCase.prepare({ ...RUN, id: 7 });
    await discarded.t.advance(10);
    discarded.useCase.discard(7); // the call ended unanswered
    expect(discarded.useCase.preparedCount).toBe(0);
    await discarded.t.advance(10);
    expect(discarded.tts.requests[0]!.signal?.aborted).toBe(true);
  });
});
