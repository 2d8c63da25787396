import { describe, expect, it } from '@jest/globals';
import { MemoryMediaChannel } from '../../test/fakes/memory-media-channel.js';
import { ScriptedLanguageModel } from '../../test/fakes/scripted-language-model.js';
import { ScriptedSpeechToText, ScriptedTextToSpeech, speechAudio } from '../../test/fakes/scripted-speech.js';
import { VirtualTimeline } from '../../test/fakes/virtual-timeline.js';
import { Conversation } from '../conversation/conversation.js';
import type { ConversationRecord } from '../ports/conversation-record.port.js';
import { exampleWorkflowDefinition } from '../workflows/example-definition.js';
import type { WorkflowDefinition } from '../workflows/workflow-definition.js';
import { WorkflowGraph } from '../workflows/workflow-graph.js';
import { L16_16K, L16_24K, MULAW_8K, type AudioFormat } from './audio-format.js';
import { readWav } from './wav.js';
import { heardPrefix } from './sentence-chunker.js';
import { ENERGY_VAD_SPEECH_DBFS, EnergyVoiceActivityDetectorFactory } from './energy-vad.js';
import { readAudioFixture } from '../../test/fixtures/audio/fixtures.js';
import { PlayoutPacer } from './playout-pacer.js';
import { PreparedSpeech, speechPieces } from './prepared-speech.js';
import { MUTED_REPLY_MAX_CHARS, VoiceSession, type VoiceSessionOptions } from './voice-session.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AMD_FIXTURES_DIR, readAmdFixture } from '../../test/fixtures/amd/fixtures.js';
import { renderTemplate, templateContextOf } from '../conversation/template.js';
import type { VoiceSessionEventMap } from './voice-session-events.js';
import type { VoiceSessionArtifacts } from './voice-session-sink.js';
import type { VoiceSettings } from './voice-settings.js';
import { MemoryRecordingOutput } from '../../test/fakes/memory-recording-output.js';

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
  /** The stereo WAV of what the session streamed to the sink's recording output by the time it ended. */
  recording: Uint8Array;
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
    ttsFailOn?: { match: RegExp; error: Error };
    ttsFormat?: AudioFormat;
    outFormat?: AudioFormat;
    /** The sink reports the caller handed over (an accepted transfer). */
    handOver?: boolean;
    /** Answering-machine detection options (docs/voicemail.md). */
    voicemail?: VoiceSessionOptions['voicemail'];
    /** The scripted STT streams an interim per this much speech (default 0: per-utterance text only). */
    interimEveryMs?: number;
    vad?: VoiceSessionOptions['vad'];
    /** The greeting synthesized while the call rang. */
    greeting?: VoiceSessionOptions['greeting'];
  } = {},
) {
  const timeline = options.timeline ?? new VirtualTimeline();
  const t0 = timeline.now();
  const lm = (options.model ?? dentalModel)(new ScriptedLanguageModel({ sleep: timeline.sleep }));
  const stt = new ScriptedSpeechToText({ sleep: timeline.sleep, finalDelayMs: STT_MS, interimEveryMs: options.interimEveryMs ?? 0, utterances: options.utterances ?? [] });
  const tts = new ScriptedTextToSpeech({
    sleep: timeline.sleep,
    firstAudioDelayMs: TTS_MS,
    msPerChar: MS_PER_CHAR,
    ...(options.ttsFailOn ? { failOn: options.ttsFailOn } : {}),
    ...(options.ttsFormat ? { format: options.ttsFormat } : {}),
  });
  const channel = new MemoryMediaChannel(timeline, options.outFormat ? { outFormat: options.outFormat } : {});
  const pacer = options.pacer ?? new PlayoutPacer(timeline);
  const graph = WorkflowGraph.fromDefinition(structuredClone(options.definition ?? exampleWorkflowDefinition));
  const conversation = Conversation.start({ graph, model: { lm, model: 'test-model' }, clock: timeline.clock, initialContext: CONTEXT });
  const ended: Ended[] = [];
  const recording = new MemoryRecordingOutput();
  const sink = {
    recording,
    onEnded: async (record: ConversationRecord, artifacts: VoiceSessionArtifacts) => {
      ended.push({ record, artifacts, recording: recording.wav(), atMs: timeline.now() - t0, hangUpsBefore: channel.hangUps.length });
      return options.handOver ? { handedOver: true } : undefined;
    },
  };
  const session = new VoiceSession({
    id: 'call-1',
    channel,
    conversation,
    graph,
    stt,
    tts,
    vad: options.vad ?? new EnergyVoiceActivityDetectorFactory(),
    pacer,
    timers: timeline,
    clock: timeline.clock,
    sink,
    settings: options.settings,
    ...(options.voicemail ? { voicemail: options.voicemail } : {}),
    ...(options.greeting ? { greeting: options.greeting } : {}),
  });
  const seen: Array<{ type: keyof VoiceSessionEventMap; at: number; e: unknown }> = [];
  for (const type of ['state', 'speech_started', 'speech_stopped', 'user_turn', 'node_entered', 'first_audio', 'agent_heard', 'interruption', 'agent_resumed', 'turn_metrics', 'ended'] as const) {
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
  it('says a greeting synthesized while the call rang at once: its first frame goes out at start, no TTS request', async () => {
    const timeline = new VirtualTimeline();
    const ringing = new ScriptedTextToSpeech({ sleep: timeline.sleep, firstAudioDelayMs: TTS_MS, msPerChar: MS_PER_CHAR });
    const greeting = PreparedSpeech.start(ringing, GREETING, { preferredFormat: MULAW_8K });
    await timeline.advance(300); // the call rings
    const s = setup({ timeline, greeting, utterances: ['Yes, this is Dana.'] });
    await s.timeline.advance(0);
    expect(s.of('first_audio').map((e) => e.at)).toEqual([0]); // not TTS_MS later
    await s.untilListening();
    expect(s.tts.requests).toEqual([]);
    expect(ringing.requests.map((r) => r.text)).toEqual(speechPieces(GREETING));
    expect(s.of('agent_heard').map((e) => e.text)).toEqual([GREETING]);
    // the caller heard exactly the prepared audio, then the turns go on as usual
    await s.timeline.advance(500);
    s.channel.speak(1000);
    await s.untilListening();
    expect(s.tts.requests.map((r) => r.text)[0]).toBe('Thank you, Dana.');
  });

  it('synthesizes the greeting live when the prepared one does not match its text or failed', async () => {
    const timeline = new VirtualTimeline();
    const ringing = new ScriptedTextToSpeech({ sleep: timeline.sleep, firstAudioDelayMs: TTS_MS });
    const stale = PreparedSpeech.start(ringing, 'Hello from an older greeting.', { preferredFormat: MULAW_8K });
    await timeline.advance(300);
    const s = setup({ timeline, greeting: stale });
    await s.untilListening();
    expect(s.tts.requests.map((r) => r.text)).toEqual(speechPieces(GREETING));
    expect(s.of('first_audio')[0]!.at).toBe(TTS_MS);

    const t2 = new VirtualTimeline();
    const broken = new ScriptedTextToSpeech({ sleep: t2.sleep, failOn: { match: /Brightsmile/, error: new Error('quota') } });
    const failed = PreparedSpeech.start(broken, GREETING, { preferredFormat: MULAW_8K });
    const s2 = setup({ timeline: t2, greeting: failed }); // fails while the session already waits for it
    await s2.untilListening();
    expect(s2.tts.requests.map((r) => r.text)).toEqual(speechPieces(GREETING));
    expect(s2.of('agent_heard').map((e) => e.text)).toEqual([GREETING]);
  });

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

describe('VoiceSession: what the STT hears', () => {
  it('a per-utterance STT gets the caller\'s speech with a short lead, not the silence while the agent spoke', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.'] });
    await s.untilListening(); // ~4.5 s of greeting: the caller's line is silence all along
    await s.timeline.advance(500);
    s.channel.speak(1000);
    await s.untilListening();
    expect(s.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.']);
    const stream = s.stt.streams[0]!;
    expect(stream.interimResults).toBe(false);
    // the 1,000 ms utterance, the VAD's 300 ms hangover (in 32 ms windows), the 300 ms pre-roll and the frames
    // the VAD needed to call the start and the stop; the whole stream up to the stop was over 5 s
    expect(stream.pushedBytes).toBeGreaterThanOrEqual(8 * 1300);
    expect(stream.pushedBytes).toBeLessThanOrEqual(8 * 1800);
    expect(stream.finalizeCalls).toBe(1);
  });

  it('a streaming STT (interim results) hears the whole stream, for its own endpointing and timestamps', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.'], interimEveryMs: 200 });
    await s.untilListening();
    await s.timeline.advance(500);
    s.channel.speak(1000);
    await s.untilListening();
    expect(s.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.']);
    const elapsedMs = s.timeline.now() - s.t0;
    expect(s.stt.streams[0]!.pushedBytes).toBeGreaterThan(8 * (elapsedMs - 100));
  });
});

describe('VoiceSession: hand-over', () => {
  it('does not hang up when the sink handed the caller over (an accepted transfer)', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.', 'I will be there.'], handOver: true });
    await s.untilListening();
    await s.timeline.advance(300);
    s.channel.speak(800);
    await s.untilListening();
    await s.timeline.advance(300);
    s.channel.speak(800);
    await s.timeline.until(() => s.session.state === 'ended', 30_000);
    expect(s.ended).toHaveLength(1);
    expect(s.channel.hangUps).toEqual([]);
  });
});

/** Greets, lets the caller confirm, and advances until `intoReminderMs` into the reminder's audio. */
async function untilReminderPlays(s: ReturnType<typeof setup>, intoReminderMs: number, firstSpeechMs = 800): Promise<number> {
  await s.untilListening();
  await s.timeline.advance(300);
  s.channel.speak(firstSpeechMs);
  await s.timeline.until(() => s.of('first_audio').length === 2);
  const thankYouMs = 'Thank you, Dana.'.length * MS_PER_CHAR;
  await s.timeline.advance(thankYouMs + TTS_MS + intoReminderMs);
  return s.timeline.now();
}

function withQuestion(lm: ScriptedLanguageModel): ScriptedLanguageModel {
  return dentalModel(lm).on({ system: 'Remind Dana', user: /what day/ }, { firstDelayMs: LLM_MS, text: 'Tuesday at 3pm.' });
}

describe('VoiceSession: barge-in', () => {
  it('clears within 100 ms of the minimum speech, keeps only the heard words, and truncates the engine history', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.', 'Sorry, what day?'], model: withQuestion });
    await untilReminderPlays(s, 700);
    const queuedAt = s.timeline.now();
    s.channel.speak(700);
    await s.timeline.until(() => s.channel.clears.length > 0, 2000);
    const clearAt = s.channel.clears[0];
    // The caller's speech starts where its first frame's 20 ms begin.
    const speechAt = s.channel.inbound.find((f) => f.atMs > queuedAt)!.atMs - 20;
    expect(clearAt - speechAt).toBeGreaterThanOrEqual(300);
    expect(clearAt - speechAt).toBeLessThanOrEqual(300 + 100);
    const [interruption] = s.of('interruption');
    expect(interruption.reactionMs).toBe(300);
    // "Thank you, Dana." played whole, then the reminder's first sentence (35 characters, 1400 ms) until the
    // clear: the words whose audio had ended by then.
    const sentence = 'Your cleaning is on Tuesday at 3pm.';
    const reminderStart = s.t0 + s.of('first_audio')[1].at + 'Thank you, Dana.'.length * MS_PER_CHAR;
    const fraction = (clearAt - reminderStart) / (sentence.length * MS_PER_CHAR);
    expect(fraction).toBeGreaterThan(0.7);
    expect(fraction).toBeLessThan(0.8);
    expect(interruption.heard).toBe(heardPrefix(sentence, fraction));
    expect(interruption.heard).toBe('Your cleaning is on');
    expect(s.channel.bufferedMs()).toBe(0);
    const sentAfterClear = s.channel.sent.filter((f) => f.atMs > clearAt);
    expect(sentAfterClear.length).toBe(0);

    // The interruption becomes the caller's turn, answered under the same node.
    await s.untilListening();
    const state = s.conversation.state;
    const assistantLines = state.history.filter((m) => m.role === 'assistant').map((m) => m.content);
    expect(assistantLines).toContain('Your cleaning is on');
    expect(assistantLines).not.toContain(REMINDER);
    expect(state.messages.find((m) => m.text === 'Your cleaning is on')).toMatchObject({ interrupted: true });
    expect(s.lm.streamRequests.at(-1)!.messages.map((m) => m.content)).toContain('Your cleaning is on');
    const heard = s.of('agent_heard').map((e) => [e.text, e.interrupted]);
    expect(heard).toEqual([
      [GREETING, false],
      ['Thank you, Dana.', false],
      ['Your cleaning is on', true],
      ['Tuesday at 3pm.', false],
    ]);
    expect(s.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.', 'Sorry, what day?']);
  });

  it('speech shorter than the minimum does not interrupt', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.', 'uh-huh'] });
    await untilReminderPlays(s, 300);
    s.channel.speak(200);
    await s.untilListening();
    expect(s.channel.clears).toEqual([]);
    expect(s.of('interruption')).toEqual([]);
    expect(s.of('agent_heard').map((e) => e.text)).toEqual([GREETING, 'Thank you, Dana.', REMINDER]);
    expect(s.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.']);
  });

  it('does not interrupt a node with allow_interrupt false', async () => {
    const definition = structuredClone(exampleWorkflowDefinition);
    definition.nodes.find((n) => n.id === 'confirm')!.data.allow_interrupt = false;
    const s = setup({ definition, utterances: ['Yes, this is Dana.', 'Sorry, what day?'] });
    await untilReminderPlays(s, 300);
    s.channel.speak(900);
    await s.untilListening();
    expect(s.channel.clears).toEqual([]);
    expect(s.of('agent_heard').map((e) => [e.text, e.interrupted])).toEqual([
      [GREETING, false],
      ['Thank you, Dana.', false],
      [REMINDER, false],
    ]);
  });

  it('speech while the reply is being prepared cancels it and restarts with the combined words', async () => {
    const s = setup({
      utterances: ['Yes, this is Dana.', 'I have a question.'],
      model: (lm) =>
        lm
          .on({ system: 'make sure you are speaking with', user: /question/ }, { firstDelayMs: LLM_MS, text: 'Of course, go ahead.' })
          .on({ system: 'make sure you are speaking with', user: /this is Dana/ }, { firstDelayMs: 1500, text: 'Thank you, Dana.', toolCalls: [{ name: 'identity_confirmed' }] }),
    });
    await s.untilListening();
    await s.timeline.advance(300);
    s.channel.speak(800).pause(600).speak(800);
    await s.timeline.until(() => s.of('user_turn').length === 2, 10_000);
    await s.untilListening();
    expect(s.of('user_turn').map((e) => [e.text, e.merged])).toEqual([
      ['Yes, this is Dana.', false],
      ['I have a question.', true],
    ]);
    const last = s.lm.streamRequests.at(-1)!;
    expect(last.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['Yes, this is Dana.', 'I have a question.']);
    expect(last.messages.some((m) => m.role === 'assistant' && m.content.includes('Thank you'))).toBe(false);
    expect(s.of('agent_heard').map((e) => e.text)).toEqual([GREETING, 'Of course, go ahead.']);
    const session = s.session as unknown as { transcript: { artifact(): { turns: Array<{ role: string; text: string }> } } };
    expect(session.transcript.artifact().turns.filter((t) => t.role === 'user').map((t) => t.text)).toEqual(['Yes, this is Dana. I have a question.']);
  });

  it('DTMF reaches the model as user text', async () => {
    const s = setup({ model: (lm) => lm.on({ user: '[DTMF 5]' }, { text: 'You pressed five.' }) });
    await s.untilListening();
    s.channel.dtmf('5');
    await s.untilListening();
    expect(s.lm.streamRequests.at(-1)!.lastUser).toBe('[DTMF 5]');
    expect(s.of('user_turn').map((e) => e.text)).toEqual(['[DTMF 5]']);
    expect(s.of('agent_heard').map((e) => e.text)).toEqual([GREETING, 'You pressed five.']);
  });
});

describe('VoiceSession: backchannels, noise and false interruptions', () => {
  const REST = 'Tuesday at 3pm. Can you still make it?';
  /** The caller's speech starts where its first frame after `after` begins. */
  const speechStart = (s: ReturnType<typeof setup>, after: number) => s.channel.inbound.find((f) => f.atMs > after)!.atMs - 20;

  it('an "uh-huh" longer than the minimum does not interrupt when the STT streams its words', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.', 'Uh-huh.'], interimEveryMs: 100 });
    await untilReminderPlays(s, 300);
    s.channel.speak(500);
    await s.untilListening();
    expect(s.channel.clears).toEqual([]);
    expect(s.of('interruption')).toEqual([]);
    expect(s.of('agent_heard').map((e) => [e.text, e.interrupted])).toEqual([
      [GREETING, false],
      ['Thank you, Dana.', false],
      [REMINDER, false],
    ]);
    expect(s.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.']);
  });

  it('a real interruption with streamed words clears as soon as the duration rule holds', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.', 'Sorry, what day?'], model: withQuestion, interimEveryMs: 100 });
    await untilReminderPlays(s, 700);
    const queuedAt = s.timeline.now();
    s.channel.speak(700);
    await s.timeline.until(() => s.channel.clears.length > 0, 2000);
    expect(s.channel.clears[0] - speechStart(s, queuedAt)).toBe(300);
    expect(s.of('interruption')[0]).toMatchObject({ reactionMs: 300, heard: 'Your cleaning is on' });
    await s.untilListening();
    expect(s.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.', 'Sorry, what day?']);
    expect(s.of('agent_resumed')).toEqual([]);
  });

  it('words that have not come yet hold the interruption until min speech + interruptionWordWaitMs at most, never longer', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.', 'Sorry, what day?'], model: withQuestion, interimEveryMs: 600 });
    // the caller's first line (300 ms) is too short to show when this STT's words come: the wait is kept
    await untilReminderPlays(s, 700, 300);
    const queuedAt = s.timeline.now();
    s.channel.speak(700);
    await s.timeline.until(() => s.channel.clears.length > 0, 2000);
    expect(s.channel.clears[0] - speechStart(s, queuedAt)).toBe(300 + 50);
    expect(s.channel.clears[0] - speechStart(s, queuedAt)).toBeLessThanOrEqual(300 + 100);
  });

  it("a soft onset (the bench's barge-in fixture) is timed from where its sound becomes audible, not from its first loud frame", async () => {
    // bench/voice.mjs plays barge-in-long without its 500 ms lead: sound (4 ms blocks ≥ -50 dBFS) from 12 ms into
    // its first frame, which is not loud as a whole; loud from its second frame (core/voice/sustained-speech.ts)
    const barge = readAudioFixture('barge-in-long').data.subarray(4000, 4000 + 8000);
    // per-utterance STT, the duration rule alone: 300 ms from 12 ms are complete with the frame ending at 320 (as
    // when the run was dated at 20: frames come every 20 ms), and the event counts the reaction from 12
    const u = setup({ utterances: ['Yes, this is Dana.', 'Sorry, what day?'], model: withQuestion });
    await untilReminderPlays(u, 700);
    const uQueuedAt = u.timeline.now();
    u.channel.play(barge);
    await u.timeline.until(() => u.channel.clears.length > 0, 2000);
    expect(u.channel.clears[0] - speechStart(u, uQueuedAt)).toBe(320);
    expect(u.of('interruption')[0].reactionMs).toBe(320 - 12);
    // a streaming STT whose words have not come: the wait for them ends 300 + 50 ms after the sound began (it
    // ended at 370, 20 + 350, when the run was dated at its first loud frame)
    const s = setup({ utterances: ['Yes, this is Dana.', 'Sorry, what day?'], model: withQuestion, interimEveryMs: 600 });
    await untilReminderPlays(s, 700, 300);
    const queuedAt = s.timeline.now();
    s.channel.play(barge);
    await s.timeline.until(() => s.channel.clears.length > 0, 2000);
    expect(s.channel.clears[0] - speechStart(s, queuedAt)).toBe(12 + 300 + 50);
    expect(s.of('interruption')[0].reactionMs).toBe(300 + 50);
  });

  it('no wait for words once this call showed that its STT\'s words come after the wait would end', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.', 'Sorry, what day?'], model: withQuestion, interimEveryMs: 600 });
    // 800 ms of speech whose first interim came 600 ms in: later than 300 + 50, so waiting cannot tell a backchannel
    await untilReminderPlays(s, 700);
    const queuedAt = s.timeline.now();
    s.channel.speak(700);
    await s.timeline.until(() => s.channel.clears.length > 0, 2000);
    expect(s.channel.clears[0] - speechStart(s, queuedAt)).toBe(300);
    // a streaming STT whose words come in time keeps the wait (and so tells backchannels): see the uh-huh test
  });

  it('hiss (the fixture) through the energy VAD never interrupts; loudness alone would have', async () => {
    const hiss = readAudioFixture('noise-hiss-2s').data;
    const s = setup({ utterances: ['Yes, this is Dana.', ''] });
    await untilReminderPlays(s, 200);
    s.channel.play(hiss);
    await s.untilListening();
    expect(s.channel.clears).toEqual([]);
    expect(s.of('agent_heard').map((e) => e.text)).toEqual([GREETING, 'Thank you, Dana.', REMINDER]);

    // the same hiss with a loudness-only VAD cuts the agent; its utterance is empty (noise): the agent resumes
    const loud = setup({ utterances: ['Yes, this is Dana.', ''], vad: new EnergyVoiceActivityDetectorFactory(ENERGY_VAD_SPEECH_DBFS, Infinity) });
    await untilReminderPlays(loud, 200);
    loud.channel.play(hiss);
    await loud.timeline.until(() => loud.channel.clears.length > 0, 2000);
    await loud.untilListening();
    expect(loud.of('agent_resumed')).toHaveLength(1);
    expect(loud.of('agent_resumed')[0].callerText).toBe('');
    expect(loud.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.']);
  });

  it('the minimum speech is measured on the audio itself: 200 ms delivered late and in a burst does not interrupt', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.', ''] });
    await untilReminderPlays(s, 300);
    // the carrier stalls: the caller's clock stops, 100 ms arrive on time, nothing for 250 ms, then 100 ms at once
    const caller = s.channel as unknown as { callerTimer: { cancel(): void } | null };
    caller.callerTimer?.cancel();
    caller.callerTimer = null;
    const tone = speechAudio(MULAW_8K, 200, 300);
    for (let i = 0; i < 5; i++) {
      s.channel.pushFrame(tone.subarray(i * 160, (i + 1) * 160));
      await s.timeline.advance(20);
    }
    await s.timeline.advance(250);
    for (let i = 5; i < 10; i++) s.channel.pushFrame(tone.subarray(i * 160, (i + 1) * 160));
    s.channel.startCaller();
    await s.untilListening();
    expect(s.channel.clears).toEqual([]);
    expect(s.of('agent_heard').map((e) => e.text)).toEqual([GREETING, 'Thank you, Dana.', REMINDER]);
  });

  it('a false interruption (per-utterance STT: the words come after the cut) resumes the reply from the cut word', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.', 'Uh-huh.'] });
    await untilReminderPlays(s, 700);
    const requestsBefore = s.lm.streamRequests.length;
    s.channel.speak(500);
    await s.timeline.until(() => s.channel.clears.length > 0, 2000);
    expect(s.of('interruption')[0].heard).toBe('Your cleaning is on');
    await s.untilListening();
    expect(s.of('agent_resumed').map((e) => [e.text, e.callerText])).toEqual([[REST, 'Uh-huh.']]);
    expect(s.of('agent_heard').map((e) => [e.text, e.interrupted])).toEqual([
      [GREETING, false],
      ['Thank you, Dana.', false],
      ['Your cleaning is on', true],
      [REST, false],
    ]);
    // "uh-huh" is not a turn; the model was not asked again; the engine's line is what was heard, whole again
    expect(s.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.']);
    expect(s.lm.streamRequests.length).toBe(requestsBefore);
    const state = s.conversation.state;
    const lastLine = state.messages.filter((m) => m.role === 'assistant').at(-1)!;
    expect(lastLine.text).toBe(`Your cleaning is on ${REST}`);
    expect(lastLine.interrupted).toBeUndefined();
    expect(state.history.filter((m) => m.role === 'assistant').at(-1)!.content).toBe(`Your cleaning is on ${REST}`);
    // the rest was synthesized again, from the word being played at the cut
    expect(s.tts.requests.map((r) => r.text).slice(-2)).toEqual(['Tuesday at 3pm.', 'Can you still make it?']);
    // and the caller's next words are a turn as usual
    await s.timeline.advance(300);
    s.channel.speak(800);
    await s.untilListening();
    expect(s.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.', 'hello']);
  });

  it('a resumed reply cancelled before it is heard leaves the engine\'s cut line as it was', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.', 'Uh-huh.'], model: (lm) => dentalModel(lm).on({ user: '[DTMF 5]' }, { firstDelayMs: LLM_MS, text: 'You pressed five.' }) });
    // the caller presses a key the moment the agent decides to resume (its audio not yet there)
    s.session.events.on('agent_resumed', () => queueMicrotask(() => s.channel.dtmf('5')));
    await untilReminderPlays(s, 700);
    s.channel.speak(500);
    await s.timeline.until(() => s.of('agent_resumed').length === 1, 5000);
    await s.timeline.until(() => s.of('user_turn').length === 2, 5000);
    await s.untilListening();
    expect(s.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.', '[DTMF 5]']);
    const last = s.lm.streamRequests.at(-1)!;
    expect(last.lastUser).toBe('[DTMF 5]');
    expect(last.messages.filter((m) => m.role === 'assistant').map((m) => m.content).at(-1)).toBe('Your cleaning is on');
    expect(s.of('agent_heard').map((e) => e.text)).toEqual([GREETING, 'Thank you, Dana.', 'Your cleaning is on', 'You pressed five.']);
  });

  it('a false interruption is resumed only within falseInterruptionTimeoutMs; later the words are a turn', async () => {
    const s = setup({
      utterances: ['Yes, this is Dana.', 'Uh-huh.'],
      settings: { falseInterruptionTimeoutMs: 100 },
      model: (lm) => dentalModel(lm).on({ system: 'Remind Dana', user: /Uh-huh/ }, { firstDelayMs: LLM_MS, text: 'Shall I repeat the time?' }),
    });
    await untilReminderPlays(s, 700);
    s.channel.speak(500);
    await s.timeline.until(() => s.of('user_turn').length === 2, 5000);
    await s.untilListening();
    expect(s.channel.clears).toHaveLength(1);
    expect(s.of('agent_resumed')).toEqual([]);
    expect(s.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.', 'Uh-huh.']);
    expect(s.of('agent_heard').map((e) => e.text).at(-1)).toBe('Shall I repeat the time?');
  });
});

describe('VoiceSession: false interruptions while the model still streams (a real model\'s pace)', () => {
  /** The identity reply streams at ~250 ms a word, as a hosted model does; its tool call comes after its text. */
  const SLOW = 'Thank you, Dana. I have your booking open here in front of me.';
  const slowModel = (lm: ScriptedLanguageModel) =>
    dentalModel(lm.on({ system: 'make sure you are speaking with', user: /this is Dana/ }, { firstDelayMs: LLM_MS, wordDelayMs: 250, text: SLOW, toolCalls: [{ name: 'identity_confirmed' }] }));
  /** The caller confirms; once the slow reply's first audio plays, `intoMs` of it more. */
  async function untilSlowPlays(s: ReturnType<typeof setup>, intoMs: number): Promise<void> {
    await s.untilListening();
    await s.timeline.advance(300);
    s.channel.speak(800);
    await s.timeline.until(() => s.of('first_audio').length === 2);
    await s.timeline.advance(intoMs);
  }
  /** When each model stream's signal was aborted (ms from the start), by request. */
  function watchAborts(s: ReturnType<typeof setup>): Array<number | undefined> {
    const aborted: Array<number | undefined> = [];
    const stream = s.lm.stream.bind(s.lm);
    s.lm.stream = (request) => {
      const i = aborted.push(undefined) - 1;
      request.signal?.addEventListener('abort', () => (aborted[i] = s.rel(s.timeline.now())));
      return stream(request);
    };
    return aborted;
  }
  const logsOf = (s: ReturnType<typeof setup>) => (s.session as unknown as { turnLogs: Array<{ event: string; details?: Record<string, unknown> }> }).turnLogs;

  it('a backchannel while the reply streams: the agent resumes from the cut word as the rest streams, the whole reply heard once, its tool call and transition run once', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.', 'Uh-huh.'], model: slowModel });
    const aborted = watchAborts(s);
    await untilSlowPlays(s, 100);
    s.channel.speak(500);
    await s.timeline.until(() => s.channel.clears.length > 0, 2000);
    const cutAt = s.rel(s.channel.clears[0]);
    expect(s.of('interruption')[0].heard).toBe('Thank you,');
    await s.timeline.until(() => s.of('agent_resumed').length === 1, 5000);
    const [resumed] = s.of('agent_resumed');
    expect(resumed.callerText).toBe('Uh-huh.');
    // resumed while the model was still streaming: not the whole rest yet
    expect(resumed.text).not.toBe('Dana. I have your booking open here in front of me.');
    expect(resumed.text.startsWith('Dana.')).toBe(true);
    await s.timeline.until(() => s.of('node_entered').length === 1, 10_000);
    await s.untilListening();
    // the resumed words played before the model's stream had ended (the transition follows its end)
    const resumedAudio = s.of('first_audio').find((e) => e.at > resumed.at)!;
    expect(resumedAudio.at).toBeLessThan(s.of('node_entered')[0].at);
    expect(aborted[0]).toBeUndefined(); // the muted stream was never aborted
    expect(cutAt).toBeGreaterThan(0);
    const heard = s.of('agent_heard').map((e) => [e.text, e.interrupted]);
    expect(heard).toEqual([
      [GREETING, false],
      ['Thank you,', true],
      ['Dana. I have your booking open here in front of me.', false],
      [REMINDER, false],
    ]);
    expect(`${heard[1][0]} ${heard[2][0]}`).toBe(SLOW); // in order, no word lost or said twice
    // the tool call and the transition ran once; "uh-huh" was no turn and the model was not asked again
    expect(s.of('node_entered').map((e) => e.node_id)).toEqual(['confirm']);
    expect(s.lm.streamRequests.map((r) => r.lastUser)).toEqual(['Yes, this is Dana.', 'Yes, this is Dana.']);
    expect(s.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.']);
    const state = s.conversation.state;
    const line = state.history.find((m) => m.role === 'assistant' && m.content === SLOW);
    expect(line).toMatchObject({ toolCalls: [{ name: 'identity_confirmed' }] });
    expect(state.history.filter((m) => m.role === 'tool')).toHaveLength(1);
    expect(state.messages.filter((m) => m.role === 'assistant').map((m) => [m.text, m.interrupted ?? false])).toEqual([
      [GREETING, false],
      [SLOW, false],
      [REMINDER, false],
    ]);
    // one latency entry for the reply (not a second one for its resumed audio), one interruption, the log's entry
    expect(s.of('turn_metrics')).toHaveLength(1);
    expect(s.of('interruption')).toHaveLength(1);
    const falseInterruption = logsOf(s).filter((l) => l.event === 'false_interruption');
    expect(falseInterruption.map((l) => l.details)).toEqual([
      { caller_text: 'Uh-huh.', resumed_text: `Dana. I have your booking open here in front of me. ${REMINDER}` },
    ]);
    expect(logsOf(s).filter((l) => l.event === 'turn')).toHaveLength(1);
    expect(state.usage.completion_tokens).toBeGreaterThan(0);
  });

  it('a real interruption while the reply streams: the muted stream runs until the words are judged, then is aborted; nothing after the cut is kept or acted on', async () => {
    const s = setup({
      utterances: ['Yes, this is Dana.', 'Sorry, who is this?'],
      model: (lm) => slowModel(lm.on({ system: 'make sure you are speaking with', user: /who is this/ }, { firstDelayMs: LLM_MS, text: 'This is Ava from Brightsmile Dental.' })),
    });
    const aborted = watchAborts(s);
    await untilSlowPlays(s, 100);
    s.channel.speak(700);
    await s.timeline.until(() => s.channel.clears.length > 0, 2000);
    const cutAt = s.rel(s.channel.clears[0]);
    await s.timeline.until(() => s.of('user_turn').length === 2, 5000);
    const judgedAt = s.of('user_turn')[1].at;
    await s.untilListening();
    // ran on muted past the cut; aborted when the caller's words were judged a real interruption
    expect(aborted[0]).toBeGreaterThan(cutAt);
    expect(aborted[0]).toBe(judgedAt);
    expect(s.of('agent_resumed')).toEqual([]);
    // no tool call, no transition: the caller's words are answered at the node where they were said
    expect(s.of('node_entered')).toEqual([]);
    expect(s.conversation.node.id).toBe('start');
    const state = s.conversation.state;
    expect(state.history.filter((m) => m.role === 'tool')).toEqual([]);
    expect(state.history.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual([GREETING, 'Thank you,', 'This is Ava from Brightsmile Dental.']);
    expect(state.messages.find((m) => m.text === 'Thank you,')).toMatchObject({ interrupted: true });
    const asked = s.lm.streamRequests.at(-1)!;
    expect(asked.lastUser).toBe('Sorry, who is this?');
    expect(asked.messages.some((m) => m.content.includes('booking'))).toBe(false);
    expect(s.of('agent_heard').map((e) => [e.text, e.interrupted])).toEqual([
      [GREETING, false],
      ['Thank you,', true],
      ['This is Ava from Brightsmile Dental.', false],
    ]);
  });

  it('noise while the reply streams (an empty utterance) is a false interruption too: the reply is resumed', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.', ''], model: slowModel });
    await untilSlowPlays(s, 100);
    s.channel.speak(500);
    await s.timeline.until(() => s.of('node_entered').length === 1, 10_000);
    await s.untilListening();
    expect(s.of('agent_resumed').map((e) => e.callerText)).toEqual(['']);
    expect(s.of('agent_heard').map((e) => e.text)).toEqual([GREETING, 'Thank you,', 'Dana. I have your booking open here in front of me.', REMINDER]);
    expect(s.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.']);
    expect(logsOf(s).filter((l) => l.event === 'false_interruption').map((l) => l.details?.caller_text)).toEqual(['']);
  });

  it('after falseInterruptionTimeoutMs from the end of the caller\'s speech the muted stream is aborted, and the words are a turn', async () => {
    const s = setup({
      utterances: ['Yes, this is Dana.', 'Uh-huh.'],
      // under the hangover (300 ms) + the STT's final (STT_MS): the judgement is due before the words come
      settings: { falseInterruptionTimeoutMs: 350 },
      model: (lm) => slowModel(lm.on({ system: 'make sure you are speaking with', user: /Uh-huh/ }, { firstDelayMs: LLM_MS, text: 'Is this Dana?' })),
    });
    const aborted = watchAborts(s);
    await untilSlowPlays(s, 100);
    s.channel.speak(500);
    await s.timeline.until(() => s.of('user_turn').length === 2, 5000);
    await s.untilListening();
    const speechEnd = s.rel(s.of('speech_stopped').at(-1)!.endOfSpeechMs);
    expect(aborted[0]).toBe(speechEnd + 350);
    expect(aborted[0]).toBeLessThan(s.of('user_turn')[1].at);
    expect(s.of('agent_resumed')).toEqual([]);
    expect(s.of('node_entered')).toEqual([]);
    expect(s.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.', 'Uh-huh.']);
    expect(s.conversation.state.history.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual([GREETING, 'Thank you,', 'Is this Dana?']);
  });

  it('tool calls of a response that had finished before the cut stand; those of the response still streaming run only if it resumes', async () => {
    // "Thank you, Dana." and its identity_confirmed call finish at once (the transition is taken); the reminder streams slowly
    const SLOW_REMINDER = 'Your cleaning is on Tuesday at 3pm, in the morning. Can you still make it?';
    const s = setup({
      utterances: ['Yes, this is Dana.', 'Sorry, what day?'],
      model: (lm) =>
        dentalModel(
          lm
            .on({ system: 'Remind Dana', user: /what day/ }, { firstDelayMs: LLM_MS, text: 'Tuesday at 3pm.' })
            .on({ system: 'Remind Dana', user: /this is Dana/ }, { firstDelayMs: LLM_MS, wordDelayMs: 250, text: SLOW_REMINDER, toolCalls: [{ name: 'will_attend' }] }),
        ),
    });
    const aborted = watchAborts(s);
    await untilReminderPlays(s, 1700); // ~750 ms into the reminder's first piece (it streams ~2 s before its comma)
    s.channel.speak(700);
    await s.timeline.until(() => s.of('user_turn').length === 2, 5000);
    await s.untilListening();
    expect(aborted[1]).toBeGreaterThan(s.rel(s.channel.clears[0])); // the reminder's call ran on muted
    // the transition made before the cut stands: the caller is answered at the reminder node
    expect(s.of('node_entered').map((e) => e.node_id)).toEqual(['confirm']);
    expect(s.lm.streamRequests.at(-1)!.system).toContain('Remind Dana');
    const history = s.conversation.state.history;
    expect(history.find((m) => m.role === 'assistant' && m.content === 'Thank you, Dana.')).toMatchObject({ toolCalls: [{ name: 'identity_confirmed' }] });
    // the streaming response's will_attend call never ran: no end node, no second tool result
    expect(history.filter((m) => m.role === 'tool')).toHaveLength(1);
    expect(s.conversation.status).toBe('active');
    expect(s.of('agent_heard').map((e) => [e.text, e.interrupted]).slice(1)).toEqual([
      ['Thank you, Dana.', false],
      ['Your cleaning is on', true],
      ['Tuesday at 3pm.', false],
    ]);
    expect(history.filter((m) => m.role === 'assistant').map((m) => m.content).slice(-2)).toEqual(['Your cleaning is on', 'Tuesday at 3pm.']);
  });

  it('a resumed reply cut again while still streaming, this time for real: the engine keeps the words heard before and after the first cut', async () => {
    const LONG = 'Thank you, Dana. I have your booking here. It is a cleaning. It is on Tuesday at three. Is that still good?';
    const s = setup({
      utterances: ['Yes, this is Dana.', 'Uh-huh.', 'Wait, which day?'],
      model: (lm) =>
        dentalModel(
          lm
            .on({ system: 'make sure you are speaking with', user: /which day/ }, { firstDelayMs: LLM_MS, text: 'Tuesday.' })
            .on({ system: 'make sure you are speaking with', user: /this is Dana/ }, { firstDelayMs: LLM_MS, wordDelayMs: 250, text: LONG, toolCalls: [{ name: 'identity_confirmed' }] }),
        ),
    });
    const aborted = watchAborts(s);
    await untilSlowPlays(s, 100);
    s.channel.speak(500);
    await s.timeline.until(() => s.of('agent_resumed').length === 1, 5000);
    await s.timeline.until(() => s.of('first_audio').length === 3, 5000); // the resumed words play
    await s.timeline.advance(600);
    s.channel.speak(700);
    await s.timeline.until(() => s.of('user_turn').length === 2, 8000);
    await s.untilListening();
    expect(s.channel.clears).toHaveLength(2);
    expect(aborted[0]).toBe(s.of('user_turn')[1].at);
    const heard = s.of('agent_heard').map((e) => [e.text, e.interrupted]);
    expect(heard.slice(1, 3)).toEqual([
      ['Thank you,', true],
      [expect.stringMatching(/^Dana\./u), true],
    ]);
    const line = `${heard[1][0]} ${heard[2][0]}`;
    expect(LONG.startsWith(line)).toBe(true);
    const state = s.conversation.state;
    expect(state.history.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual([GREETING, line, 'Tuesday.']);
    expect(state.messages.find((m) => m.text === line)).toMatchObject({ interrupted: true });
    expect(state.history.filter((m) => m.role === 'tool')).toEqual([]);
    expect(s.of('node_entered')).toEqual([]);
  });

  it(`a muted reply streaming more than ${MUTED_REPLY_MAX_CHARS} characters after the cut is dropped then, as on a real interruption`, async () => {
    const LONG = `Thank you, Dana. ${'Here is more. '.repeat(300)}`;
    const s = setup({
      utterances: ['Yes, this is Dana.', 'Uh-huh.'],
      model: (lm) =>
        dentalModel(
          lm
            .on({ system: 'make sure you are speaking with', user: /Uh-huh/ }, { firstDelayMs: LLM_MS, text: 'Is this Dana?' })
            .on({ system: 'make sure you are speaking with', user: /this is Dana/ }, { firstDelayMs: LLM_MS, wordDelayMs: 1, text: LONG }),
        ),
    });
    const aborted = watchAborts(s);
    await untilSlowPlays(s, 100);
    s.channel.speak(500);
    await s.timeline.until(() => s.channel.clears.length > 0, 2000);
    const cutAt = s.rel(s.channel.clears[0]);
    await s.timeline.until(() => s.of('user_turn').length === 2, 5000);
    await s.untilListening();
    // ~5 characters a millisecond: the bound is passed ~400 ms after the cut, long before the utterance is judged
    expect(aborted[0]).toBeGreaterThan(cutAt + 300);
    expect(aborted[0]).toBeLessThan(cutAt + 600);
    expect(aborted[0]).toBeLessThan(s.of('user_turn')[1].at);
    expect(s.of('agent_resumed')).toEqual([]);
    expect(s.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.', 'Uh-huh.']);
    expect(s.conversation.state.history.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual([GREETING, 'Thank you,', 'Is this Dana?']);
  });

  it('a model failing while its reply is muted: the engine keeps the heard words; a backchannel then gets the reply again, real words a turn', async () => {
    for (const second of ['Uh-huh.', 'Sorry, who is this?']) {
      const s = setup({
        utterances: ['Yes, this is Dana.', second],
        model: (lm) =>
          dentalModel(
            lm
              .on({ system: 'make sure you are speaking with', user: /this is Dana/ }, { firstDelayMs: LLM_MS, wordDelayMs: 250, text: SLOW, error: new Error('upstream reset'), failAfterWords: 8 }, 1)
              .on({ system: 'make sure you are speaking with', user: /who is this/ }, { firstDelayMs: LLM_MS, text: 'This is Ava.' })
              .on({ system: 'make sure you are speaking with', user: /this is Dana/ }, { firstDelayMs: LLM_MS, text: 'Sorry, Dana, thank you.' }),
          ),
      });
      await untilSlowPlays(s, 100);
      s.channel.speak(500);
      await s.timeline.until(() => s.channel.clears.length > 0, 2000);
      await s.timeline.until(() => s.of('agent_heard').length === 3 && s.session.state === 'listening', 8000);
      expect(s.ended).toEqual([]);
      const lines = s.conversation.state.history.filter((m) => m.role === 'assistant').map((m) => m.content);
      if (second === 'Uh-huh.') {
        expect(s.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.']);
        expect(lines).toEqual([GREETING, 'Thank you,', 'Sorry, Dana, thank you.']);
      } else {
        expect(s.of('user_turn').map((e) => e.text)).toEqual(['Yes, this is Dana.', second]);
        expect(lines).toEqual([GREETING, 'Thank you,', 'This is Ava.']);
      }
      expect(s.of('agent_heard').map((e) => e.text).slice(1, 2)).toEqual(['Thank you,']);
    }
  });

  it('the caller hanging up while a reply is muted persists only the heard words', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.', 'Uh-huh.'], model: slowModel });
    const aborted = watchAborts(s);
    await untilSlowPlays(s, 100);
    s.channel.speak(500);
    await s.timeline.until(() => s.channel.clears.length > 0, 2000);
    await s.timeline.advance(100);
    s.channel.hangUpFromCaller();
    await s.timeline.until(() => s.ended.length > 0, 5000);
    const [end] = s.ended;
    expect(aborted[0]).toBe(end.atMs);
    expect(end.artifacts.outcome).toEqual({ reason: 'hang_up', disposition: 'completed' });
    expect(end.record.messages.filter((m) => m.role === 'assistant').map((m) => [m.text, m.interrupted ?? false])).toEqual([
      [GREETING, false],
      ['Thank you,', true],
    ]);
    expect(end.record.node_path).toEqual(['start']);
    expect(end.artifacts.transcript.turns.at(-1)).toMatchObject({ role: 'assistant', text: 'Thank you,', interrupted: true });
  });

  it('an endCall reply cut while it streams and resumed still hangs up after its last words, once', async () => {
    const s = setup({
      utterances: ['Yes, this is Dana.', 'I will be there.', 'Uh-huh.'],
      model: (lm) => dentalModel(lm.on({ system: 'arrive ten minutes early', noTools: true }, { firstDelayMs: LLM_MS, wordDelayMs: 250, text: GOODBYE })),
    });
    await s.untilListening();
    await s.timeline.advance(300);
    s.channel.speak(800);
    await s.untilListening();
    await s.timeline.advance(300);
    s.channel.speak(800);
    await s.timeline.until(() => s.of('first_audio').length === 3, 10_000);
    await s.timeline.advance(100);
    s.channel.speak(500);
    await s.timeline.until(() => s.ended.length > 0 && s.channel.hangUps.length > 0, 30_000);
    expect(s.channel.clears).toHaveLength(1);
    expect(s.of('agent_resumed')).toHaveLength(1);
    const goodbye = s.of('agent_heard').filter((e) => e.node_id === 'end_confirmed');
    expect(goodbye.map((e) => [e.text, e.interrupted])).toEqual([
      ['Wonderful.', false], // its first sentence had played whole; the next had not begun
      ['Please arrive ten minutes early. Goodbye!', false],
    ]);
    expect(s.lm.streamRequests.filter((r) => r.system.includes('arrive ten minutes early'))).toHaveLength(1);
    const hangUp = s.channel.hangUps[0];
    expect(hangUp.atMs).toBeGreaterThanOrEqual(s.channel.sent.at(-1)!.playAtMs + 20);
    const [end] = s.ended;
    expect(end.hangUpsBefore).toBe(0);
    expect(end.artifacts.outcome).toEqual({ reason: 'end_node', disposition: 'appointment_confirmed' });
    expect(end.record.messages.filter((m) => m.role === 'assistant').at(-1)).toMatchObject({ text: GOODBYE });
    expect(end.record.messages.filter((m) => m.role === 'assistant').at(-1)!.interrupted).toBeUndefined();
    expect(end.artifacts.transcript.turns.filter((t) => t.role === 'user').map((t) => t.text)).toEqual(['Yes, this is Dana.', 'I will be there.']);
    expect(end.artifacts.logs.filter((l) => l.event === 'false_interruption')).toHaveLength(1);
    expect(end.artifacts.metrics).toMatchObject({ turns: 2, interruptions: 1 });
  });
});

describe('VoiceSession: endings', () => {
  it('a silent caller gets a check-in, then a goodbye, then the call ends user_idle', async () => {
    const s = setup({
      settings: { userIdleTimeoutMs: 3000 },
      model: (lm) =>
        lm
          .on({ user: 'The user has been quiet' }, { text: 'Are you still there?' })
          .on({ user: 'The user has still not answered' }, { text: 'Goodbye for now.' }),
    });
    await s.untilListening();
    const greetingHeardAt = s.timeline.now() - s.t0;
    await s.timeline.until(() => s.ended.length > 0 && s.channel.hangUps.length > 0, 30_000);
    const heard = s.of('agent_heard');
    expect(heard.map((e) => e.text)).toEqual([GREETING, 'Are you still there?', 'Goodbye for now.']);
    const audio = s.of('first_audio').map((e) => e.at);
    expect(audio[1] - greetingHeardAt).toBeGreaterThanOrEqual(3000);
    expect(audio[1] - greetingHeardAt).toBeLessThanOrEqual(3000 + TTS_MS + 30);
    expect(s.ended[0].artifacts.outcome).toEqual({ reason: 'user_idle', disposition: 'user_idle' });
    expect(s.channel.hangUps).toMatchObject([{ reason: 'user_idle' }]);
    expect(s.channel.hangUps[0].atMs - s.t0).toBeGreaterThanOrEqual(heard[2].endMs - s.t0);
  });

  it('caller speech resets the idle count', async () => {
    const s = setup({
      settings: { userIdleTimeoutMs: 3000 },
      utterances: ['Yes, this is Dana.'],
      model: (lm) => dentalModel(lm).on({ user: 'The user has been quiet' }, { text: 'Are you still there?' }),
    });
    await s.untilListening();
    await s.timeline.advance(3500); // first strike: the check-in
    await s.untilListening();
    s.channel.speak(800);
    await s.untilListening();
    await s.timeline.advance(3500); // a first strike again, not the goodbye
    await s.untilListening();
    expect(s.of('agent_heard').map((e) => e.text).slice(-1)).toEqual(['Are you still there?']);
    expect(s.ended).toEqual([]);
  });

  it('the time limit cuts the agent, says goodbye and ends max_duration', async () => {
    const s = setup({
      settings: { maxCallDurationMs: 2000 },
      model: (lm) => lm.on({ user: 'time limit' }, { text: 'We are out of time. Goodbye.' }),
    });
    await s.timeline.until(() => s.ended.length > 0 && s.channel.hangUps.length > 0, 30_000);
    const heard = s.of('agent_heard').map((e) => [e.text, e.interrupted]);
    expect(heard[0][1]).toBe(true);
    expect(GREETING.startsWith(String(heard[0][0]))).toBe(true);
    expect(heard[1]).toEqual(['We are out of time. Goodbye.', false]);
    expect(s.channel.clears[0] - s.t0).toBe(2000);
    expect(s.ended[0].artifacts.outcome).toEqual({ reason: 'max_duration', disposition: 'max_duration' });
    expect(s.ended[0].artifacts.transcript.turns[0]).toMatchObject({ interrupted: true, text: heard[0][0] });
  });

  it('the time limit\'s goodbye is not cut by the caller talking over it: said whole, then the call ends at once', async () => {
    const s = setup({
      settings: { maxCallDurationMs: 2000 },
      model: (lm) => lm.on({ user: 'time limit' }, { text: 'We are out of time. Thank you for calling, and goodbye.' }),
    });
    await s.timeline.until(() => s.of('agent_heard').length > 0, 10_000); // the greeting, cut by the limit
    await s.timeline.until(() => s.of('first_audio').length > 1, 10_000); // the goodbye starts playing
    await s.timeline.advance(300);
    s.channel.speak(1500);
    await s.timeline.until(() => s.ended.length > 0 && s.channel.hangUps.length > 0, 30_000);
    expect(s.channel.clears).toHaveLength(1); // the limit's own cut of the greeting; none for the goodbye
    expect(s.of('agent_heard').at(-1)).toMatchObject({ text: 'We are out of time. Thank you for calling, and goodbye.', interrupted: false });
    expect(s.ended[0].artifacts.outcome).toEqual({ reason: 'max_duration', disposition: 'max_duration' });
    // ended once the goodbye was heard, not after the 15 s grace
    expect(s.channel.hangUps[0].atMs - s.t0).toBeLessThan(2000 + 10_000);
  });

  it('a caller hang-up mid-answer ends the call with what was heard, persisted', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.'] });
    await untilReminderPlays(s, 500);
    s.channel.hangUpFromCaller();
    await s.timeline.until(() => s.ended.length > 0, 5000);
    const [end] = s.ended;
    expect(end.artifacts.outcome).toEqual({ reason: 'hang_up', disposition: 'completed' });
    expect(s.channel.hangUps).toEqual([]);
    const last = end.artifacts.transcript.turns.at(-1)!;
    expect(last).toMatchObject({ role: 'assistant', interrupted: true, node_id: 'confirm' });
    expect(REMINDER.startsWith(last.text)).toBe(true);
    expect(last.text.length).toBeLessThan(REMINDER.length);
    expect(end.record.status).toBe('ended');
    expect(end.record.end_reason).toBe('hang_up');
  });

  it('a TTS provider failing for good ends the call failed, persisted before the hang-up', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.'], ttsFailOn: { match: /Your cleaning/, error: new Error('tts down') } });
    await s.untilListening();
    await s.timeline.advance(300);
    s.channel.speak(800);
    await s.timeline.until(() => s.ended.length > 0, 10_000);
    const [end] = s.ended;
    expect(end.artifacts.outcome).toEqual({ reason: 'failed', disposition: 'failed', error: 'tts failed: tts down' });
    expect(end.record.disposition).toBe('failed');
    expect(end.hangUpsBefore).toBe(0);
    expect(s.channel.hangUps).toMatchObject([{ reason: 'failed' }]);
  });

  it('an STT stream that cannot open, or ends on its own, ends the call failed', async () => {
    const s = setup();
    await s.untilListening();
    await s.stt.current!.close();
    await s.timeline.until(() => s.ended.length > 0, 1000);
    expect(s.ended[0].artifacts.outcome).toEqual({ reason: 'failed', disposition: 'failed', error: 'stt failed: the recognition stream ended' });
    expect(s.channel.hangUps).toMatchObject([{ reason: 'failed' }]);
  });

  it('a model failing twice ends the call failed; once is retried', async () => {
    const s = setup({
      utterances: ['Yes, this is Dana.', 'Hello?'],
      model: (lm) =>
        lm
          .on({ user: /this is Dana/ }, { error: new Error('model overloaded') }, 1)
          .on({ user: /this is Dana/ }, { text: 'Thanks.' }, 1)
          .on({ user: /Hello/ }, { error: new Error('model overloaded') }),
    });
    await s.untilListening();
    await s.timeline.advance(300);
    s.channel.speak(800);
    await s.untilListening();
    expect(s.of('agent_heard').map((e) => e.text)).toEqual([GREETING, 'Thanks.']);
    await s.timeline.advance(300);
    s.channel.speak(800);
    await s.timeline.until(() => s.ended.length > 0, 10_000);
    expect(s.ended[0].artifacts.outcome).toMatchObject({ reason: 'failed', disposition: 'failed', error: 'llm failed: model overloaded' });
  });
});

describe('VoiceSession: pacing and recording', () => {
  it('converts TTS audio (24 kHz PCM) to the channel format: μ-law 8 kHz frames, or L16 16 kHz for Vonage', async () => {
    const mulaw = setup({ ttsFormat: L16_24K });
    await mulaw.untilListening();
    // Two pieces (the space between them is not spoken), each ending on a padded frame.
    const greetingMs = mulaw.tts.requests.reduce((ms, r) => ms + r.text.length * MS_PER_CHAR, 0);
    expect(mulaw.tts.requests[0].preferredFormat).toEqual(MULAW_8K);
    // whole 20 ms frames (the pacer sends a top-up's frames as one piece)
    expect(mulaw.channel.sent.every((f) => f.audio.length > 0 && f.audio.length % 160 === 0)).toBe(true);
    const mulawMs = mulaw.channel.sent.reduce((n, f) => n + f.audio.length, 0) / 8;
    expect(mulawMs - greetingMs).toBeGreaterThanOrEqual(0);
    expect(mulawMs - greetingMs).toBeLessThanOrEqual(40);

    const l16 = setup({ ttsFormat: L16_24K, outFormat: L16_16K });
    await l16.untilListening();
    const bytes = l16.channel.sent.reduce((n, f) => n + f.audio.length, 0);
    expect(Math.abs(bytes / 32 - greetingMs)).toBeLessThanOrEqual(40); // 32 bytes per ms of L16 16 kHz
    expect(l16.of('agent_heard').map((e) => e.text)).toEqual([GREETING]);
  });

  it('many calls share one pacer timer and none runs more than 200 ms ahead', async () => {
    const timeline = new VirtualTimeline();
    let live = 0;
    let maxLive = 0;
    const pacerTimers = {
      now: () => timeline.now(),
      setTimeout(fn: () => void, ms: number) {
        live++;
        maxLive = Math.max(maxLive, live);
        let done = false;
        const h = timeline.setTimeout(() => {
          done = true;
          live--;
          fn();
        }, ms);
        return {
          cancel() {
            if (!done) live--;
            done = true;
            h.cancel();
          },
        };
      },
    };
    const pacer = new PlayoutPacer(pacerTimers);
    const calls = Array.from({ length: 10 }, () => setup({ timeline, pacer }));
    await timeline.advance(200);
    expect(pacer.activeCount).toBe(10);
    await timeline.until(() => calls.every((c) => c.of('agent_heard').length === 1), 10_000);
    expect(maxLive).toBe(1);
    for (const c of calls) expect(c.channel.maxBufferedMs).toBeLessThanOrEqual(200);
    expect(pacer.ticking).toBe(false);
  });

  it('records caller left and agent right on one clock: audio at the same instant lands on the same sample', async () => {
    const s = setup({ utterances: ['Yes, this is Dana.'] });
    await s.untilListening();
    const speechAt = s.timeline.now();
    s.channel.speak(800);
    await s.untilListening();
    s.channel.hangUpFromCaller();
    await s.timeline.until(() => s.ended.length > 0);
    const wav = readWav(s.ended[0].recording);
    expect(wav.channels).toBe(2);
    expect(wav.sampleRate).toBe(8000);
    const frames = wav.samples.length / 2;
    const left = (i: number) => wav.samples[2 * i];
    const right = (i: number) => wav.samples[2 * i + 1];
    const firstNonZero = (get: (i: number) => number, from = 0) => {
      for (let i = from; i < frames; i++) if (Math.abs(get(i)) > 100) return i;
      return -1;
    };
    // The greeting's first frame plays at t0 + TTS_MS.
    // (A tone's first sample is 0: the first loud sample is the next one.)
    expect(firstNonZero(right) - 1).toBe((TTS_MS * 8000) / 1000);
    // The caller's speech starts with the first frame after it was queued (each frame covers the 20 ms before it arrived).
    const callerFrameAt = s.channel.inbound.find((f) => f.atMs > speechAt)!.atMs - 20;
    expect(firstNonZero(left) - 1).toBe(((callerFrameAt - s.t0) * 8000) / 1000);
    // The reply's first audio lands where the session sent it.
    const replyFirstAudio = s.of('first_audio')[1].at;
    const replyStart = firstNonZero(right, ((speechAt - s.t0) * 8000) / 1000);
    expect(replyStart - 1).toBe((replyFirstAudio * 8000) / 1000);
    expect(Math.abs(frames / 8 - (s.timeline.now() - s.t0))).toBeLessThanOrEqual(20);
  });
});

describe('VoiceSession: answering-machine detection (docs/voicemail.md)', () => {
  const MESSAGE = 'Hi {{first_name}}, this is Ava from Brightsmile Dental. Please call us back.';
  const render = (t: string) => renderTemplate(t, templateContextOf(CONTEXT, {}));

  it('a human: the greeting waits for the decision, then the agent talks; "Hello?" is not a turn', async () => {
    const s = setup({ utterances: ['Hello?', 'Yes, this is Dana.'], voicemail: { settings: { detect: true, action: 'hangup' }, render } });
    await s.timeline.advance(300);
    s.channel.speak(500);
    await s.timeline.advance(1000);
    // undecided: nothing said yet
    expect(s.tts.requests).toEqual([]);
    await s.untilListening();
    const firstAudio = s.of('first_audio')[0]!.at;
    // speech 320-820 ms, then 700 ms of silence decide "human" at about 1.5 s; the greeting follows
    expect(firstAudio).toBeGreaterThanOrEqual(1400);
    expect(firstAudio).toBeLessThanOrEqual(1700);
    expect(s.of('agent_heard').map((e) => e.text)).toEqual([GREETING]);
    expect(s.of('user_turn')).toEqual([]);
    // then the call goes on as usual
    await s.timeline.advance(300);
    s.channel.speak(800);
    await s.untilListening();
    expect(s.of('user_turn').map((u) => u.text)).toEqual(['Yes, this is Dana.']);
  });

  it('a machine with action hangup: nothing is said, the run ends voicemail and the call hangs up after the record', async () => {
    const s = setup({ voicemail: { settings: { detect: true, action: 'hangup' }, render } });
    await s.timeline.advance(200);
    s.channel.speak(4000);
    await s.timeline.until(() => s.session.state === 'ended', 10_000);
    expect(s.tts.requests).toEqual([]);
    expect(s.ended).toHaveLength(1);
    const [e] = s.ended;
    expect(e!.record.disposition).toBe('voicemail');
    expect(e!.record.gathered_context.mapped_call_disposition).toBe('voicemail');
    expect(e!.artifacts.outcome).toEqual({ reason: 'voicemail', disposition: 'voicemail' });
    expect(e!.hangUpsBefore).toBe(0);
    expect(s.channel.hangUps).toHaveLength(1);
    // decided 2.6 s into the greeting (which began at about 220 ms)
    expect(e!.atMs).toBeGreaterThanOrEqual(2800);
    expect(e!.atMs).toBeLessThanOrEqual(3100);
    expect(e!.artifacts.logs.find((l) => l.event === 'answering_machine_detection')).toMatchObject({
      details: { verdict: 'machine', source: 'heuristic', action: 'hang_up' },
    });
  });

  it('a machine with leave_message: the rendered message starts after the beep, is not interrupted, and the run ends voicemail_left', async () => {
    const fixture = readAmdFixture('vm-sam-beep-1000');
    const wav = readWav(new Uint8Array(readFileSync(join(AMD_FIXTURES_DIR, 'vm-sam-beep-1000.wav'))));
    const s = setup({ utterances: [fixture.transcript], voicemail: { settings: { detect: true, action: 'leave_message', message: MESSAGE }, render } });
    s.channel.play(wav.data);
    await s.timeline.until(() => s.session.state === 'ended', 30_000);
    // the channel's first caller frame goes out 20 ms after the start
    const beepEnd = 20 + fixture.beep!.end_ms;
    const firstAudio = s.of('first_audio')[0]!.at;
    expect(firstAudio).toBeGreaterThanOrEqual(beepEnd);
    expect(firstAudio).toBeLessThanOrEqual(beepEnd + 200);
    expect(s.tts.requests.map((r) => r.text).join(' ')).toBe('Hi Dana, this is Ava from Brightsmile Dental. Please call us back.');
    expect(s.of('agent_heard').map((e) => e.text)).toEqual(['Hi Dana, this is Ava from Brightsmile Dental. Please call us back.']);
    expect(s.of('interruption')).toEqual([]);
    expect(s.of('user_turn')).toEqual([]);
    expect(s.ended[0]!.artifacts.outcome).toEqual({ reason: 'voicemail', disposition: 'voicemail_left' });
    expect(s.ended[0]!.record.disposition).toBe('voicemail_left');
    // hung up only once the message was heard
    expect(s.channel.hangUps[0]!.atMs - s.t0).toBeGreaterThanOrEqual(s.of('agent_heard')[0]!.endMs - s.t0);
  });
});

