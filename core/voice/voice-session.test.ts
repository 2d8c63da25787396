import { describe, expect, it } from '@jest/globals';
import { MemoryMediaChannel } from '../../test/fakes/memory-media-channel.js';
import { ScriptedLanguageModel } from '../../test/fakes/scripted-language-model.js';
import { ScriptedSpeechToText, ScriptedTextToSpeech } from '../../test/fakes/scripted-speech.js';
import { VirtualTimeline } from '../../test/fakes/virtual-timeline.js';
import { Conversation } from '../conversation/conversation.js';
import type { ConversationRecord } from '../ports/conversation-record.port.js';
import { exampleWorkflowDefinition } from '../workflows/example-definition.js';
import type { WorkflowDefinition } from '../workflows/workflow-definition.js';
import { WorkflowGraph } from '../workflows/workflow-graph.js';
import { readWav } from './wav.js';
import { EnergyVoiceActivityDetectorFactory } from './energy-vad.js';
import { PlayoutPacer } from './playout-pacer.js';
import { VoiceSession } from './voice-session.js';
import type { VoiceSessionEventMap } from './voice-session-events.js';
import type { VoiceSessionArtifacts } from './voice-session-sink.js';
import type { VoiceSettings } from './voice-settings.js';

const CONTEXT = { first_name: 'Dana', appointment_time: 'Tuesday at 3pm' };
const GREETING = 'Hi, this is Ava from Brightsmile Dental. Am I speaking with Dana?';
const REMINDER = 'Your cleaning is on Tuesday at 3pm. Can you still make it?';
const GOODBYE = 'Wonderful. Please arrive ten minutes early. Goodbye!';
/** Scripted delays: STT final 100 ms after finalize, model first token 200 ms, TTS first audio 50 ms. */
const STT_MS = 100;
const LLM_MS = 200;
const TTS_MS = 50;
const MS_PER_CHAR = 40;

interface Ended {
  record: ConversationRecord;
  artifacts: VoiceSessionArtifacts;
  atMs: number;
  hangUpsBefore: number;
}

function dentalModel(lm: ScriptedLanguageModel): ScriptedLanguageModel {
  return lm
    .on({ system: 'make sure you are speaking with', user: /this is Dana/ }, { firstDelayMs: LLM_MS, text: 'Thank you, Dana.', toolCalls: [{ name: 'identity_confirmed' }] })
    .on({ system: 'Remind Dana', user: /this is Dana/ }, { firstDelayMs: LLM_MS, text: REMINDER })
    .on({ system: 'Remind Dana', user: /be there/ }, { firstDelayMs: LLM_MS, toolCalls: [{ name: 'will_attend' }] })
    .on({ system: 'arrive ten minutes early', noTools: true }, { firstDelayMs: LLM_MS, text: GOODBYE })
    .onExtract({ user: 'will_attend (boolean)' }, { value: { will_attend: true } });
}

function setup(
  options: {
    settings?: Partial<VoiceSettings>;
    definition?: WorkflowDefinition;
    utterances?: string[];
    model?: (lm: ScriptedLanguageModel) => ScriptedLanguageModel;
    pacer?: PlayoutPacer;
    timeline?: VirtualTimeline;
    tts?: ScriptedTextToSpeech;
  } = {},
) {
  const timeline = options.timeline ?? new VirtualTimeline();
  const t0 = timeline.now();
  const lm = (options.model ?? dentalModel)(new ScriptedLanguageModel({ sleep: timeline.sleep }));
  const stt = new ScriptedSpeechToText({ sleep: timeline.sleep, finalDelayMs: STT_MS, interimEveryMs: 0, utterances: options.utterances ?? [] });
  const tts = options.tts ?? new ScriptedTextToSpeech({ sleep: timeline.sleep, firstAudioDelayMs: TTS_MS, msPerChar: MS_PER_CHAR });
  const channel = new MemoryMediaChannel(timeline);
  const pacer = options.pacer ?? new PlayoutPacer(timeline);
  const graph = WorkflowGraph.fromDefinition(structuredClone(options.definition ?? exampleWorkflowDefinition));
  const conversation = Conversation.start({ graph, model: { lm, model: 'test-model' }, clock: timeline.clock, initialContext: CONTEXT });
  const ended: Ended[] = [];
  const sink = {
    onEnded: async (record: ConversationRecord, artifacts: VoiceSessionArtifacts) => {
      ended.push({ record, artifacts, atMs: timeline.now() - t0, hangUpsBefore: channel.hangUps.length });
    },
  };
  const session = new VoiceSession({
    id: 'call-1',
    channel,
    conversation,
    graph,
    stt,
    tts,
    vad: new EnergyVoiceActivityDetectorFactory(),
    pacer,
    timers: timeline,
    clock: timeline.clock,
    sink,
    settings: options.settings,
  });
  const seen: Array<{ type: keyof VoiceSessionEventMap; at: number; e: unknown }> = [];
  for (const type of ['state', 'speech_started', 'speech_stopped', 'user_turn', 'node_entered', 'first_audio', 'agent_heard', 'interruption', 'turn_metrics', 'ended'] as const) {
    session.events.on(type, (e: unknown) => seen.push({ type, at: timeline.now() - t0, e }));
  }
  const of = <K extends keyof VoiceSessionEventMap>(type: K) => seen.filter((s) => s.type === type).map((s) => ({ ...(s.e as VoiceSessionEventMap[K]), at: s.at }));
  session.start();
  channel.startCaller();
  /** Advances until the agent is listening again after speaking (the current turn was heard). */
  const untilListening = async (limit = 30_000) => {
    await timeline.until(() => session.state === 'speaking' || session.state === 'ended', limit);
    await timeline.until(() => session.state === 'listening' || session.state === 'ended', limit);
  };
  return { timeline, t0, lm, stt, tts, channel, pacer, conversation, session, ended, seen, of, untilListening, rel: (ms: number) => ms - t0 };
}

describe('VoiceSession: turns', () => {
  it('greets first, then answers the caller, transitions, and reports latency per reply', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.'] });
    await s.untilListening();
    // The greeting: chunked into two pieces, both heard.
    expect(s.tts.requests.map((r) => r.text)).toEqual(['Hi, this is Ava from Brightsmile Dental.', 'Am I speaking with Dana?']);
    expect(s.of('agent_heard').map((e) => e.text)).toEqual([GREETING]);
    const firstAudio = s.of('first_audio')[0].at;
    expect(firstAudio).toBe(TTS_MS); // the greeting's first frame goes out as soon as TTS answers

    await s.timeline.advance(500);
    s.channel.speak(1000);
    await s.untilListening();
    const user = s.of('user_turn');
    expect(user).toHaveLength(1);
    expect(user[0].text).toBe('Yes, this is Dana.');
    expect(s.of('node_entered')).toMatchObject([{ node_id: 'confirm', node_name: 'Confirm appointment' }]);
    expect(s.of('agent_heard').map((e) => e.text)).toEqual([GREETING, 'Thank you, Dana.', REMINDER]);

    const [metrics] = s.of('turn_metrics');
    expect(metrics.latency.stt).toBe(STT_MS);
    expect(metrics.latency.llm_first_token).toBe(LLM_MS);
    expect(metrics.latency.tts_first_audio).toBe(TTS_MS);
    // VAD hangover (300 ms of silence, in 32 ms windows) + STT + model + TTS, plus little else.
    const configured = 300 + STT_MS + LLM_MS + TTS_MS;
    expect(metrics.latency.end_of_speech_to_first_audio).toBeGreaterThanOrEqual(configured);
    expect(metrics.latency.end_of_speech_to_first_audio).toBeLessThanOrEqual(configured + 60);
    expect(s.channel.maxBufferedMs).toBeLessThanOrEqual(200);
    expect(s.channel.hangUps).toEqual([]);
    expect(s.session.state).toBe('listening');
  });

  it('an endCall node hangs up only after its last words were heard, and persists before hanging up', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.', 'I will be there.'] });
    await s.untilListening();
    await s.timeline.advance(300);
    s.channel.speak(800);
    await s.untilListening();
    await s.timeline.advance(300);
    s.channel.speak(800);
    await s.timeline.until(() => s.ended.length > 0 && s.channel.hangUps.length > 0, 30_000);
    const goodbyeHeard = s.of('agent_heard').find((e) => e.text === GOODBYE);
    expect(goodbyeHeard).toBeDefined();
    const lastMark = s.channel.marksReported.filter((m) => m.played).at(-1)!;
    const hangUp = s.channel.hangUps[0];
    expect(hangUp.atMs).toBeGreaterThanOrEqual(lastMark.atMs);
    // The last sentence's audio was all played before the hang-up.
    const lastFrame = s.channel.sent.at(-1)!;
    expect(hangUp.atMs).toBeGreaterThanOrEqual(lastFrame.playAtMs + 20);
    const [end] = s.ended;
    expect(end.hangUpsBefore).toBe(0);
    expect(end.artifacts.outcome).toEqual({ reason: 'end_node', disposition: 'appointment_confirmed' });
    expect(end.record.gathered_context).toMatchObject({ will_attend: true, mapped_call_disposition: 'appointment_confirmed' });
    expect(end.artifacts.transcript.turns.map((t) => [t.role, t.text, t.node_id, t.interrupted])).toEqual([
      ['assistant', GREETING, 'start', false],
      ['user', 'Yes, this is Dana.', 'start', false],
      ['assistant', 'Thank you, Dana.', 'start', false],
      ['assistant', REMINDER, 'confirm', false],
      ['user', 'I will be there.', 'confirm', false],
      ['assistant', GOODBYE, 'end_confirmed', false],
    ]);
    expect(end.artifacts.logs.map((l) => l.event)).toEqual(['node_entered', 'node_entered', 'turn', 'node_entered', 'variables_extracted', 'turn']);
    expect(end.artifacts.metrics).toMatchObject({ turns: 2, interruptions: 0 });
    expect(end.artifacts.metrics.latency_p50_ms).toBeGreaterThan(600);
    expect(s.session.state).toBe('ended');
  });
});
