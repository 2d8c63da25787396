import { describe, expect, it } from '@jest/globals';
import { MemoryMediaChannel } from '../../test/fakes/memory-media-channel.js';
import { ScriptedLanguageModel } from '../../test/fakes/scripted-language-model.js';
import { ScriptedSpeechToText, ScriptedTextToSpeech } from '../../test/fakes/scripted-speech.js';
import { VirtualTimeline } from '../../test/fakes/virtual-timeline.js';
import { Conversation } from '../conversation/conversation.js';
import type { VadOptions, VoiceActivityDetector, VoiceActivityDetectorFactory } from '../ports/voice-activity-detector.port.js';
import { exampleWorkflowDefinition } from '../workflows/example-definition.js';
import { WorkflowGraph } from '../workflows/workflow-graph.js';
import { rmsDbfs } from './energy.js';
import { ENERGY_VAD_SPEECH_DBFS, EnergyVoiceActivityDetectorFactory } from './energy-vad.js';
import { PlayoutPacer } from './playout-pacer.js';
import { DeferredScoreVoiceActivityDetector } from './vad-hysteresis.js';
import type { VoiceSessionEventMap } from './voice-session-events.js';
import { VoiceSession } from './voice-session.js';
import { MemoryRecordingOutput } from '../../test/fakes/memory-recording-output.js';

/**
 * The VoiceActivityDetector port lets a detector score its windows later than its audio (Silero batches the
 * windows of all calls): the session must keep onsets and ends of speech in stream time, and endpointing and
 * barge-in must work the same, only a few ms later.
 */

const LATE_MS = 16; // Silero's default batch wait

/** The energy detector's rule, scored LATE_MS after each window arrived (as a batch would). */
class LateEnergyDetector extends DeferredScoreVoiceActivityDetector {
  protected readonly levels: number[] = [];
  constructor(
    options: VadOptions,
    protected readonly timeline: VirtualTimeline,
  ) {
    super(options, ENERGY_VAD_SPEECH_DBFS);
  }
  protected acceptWindow(window: Int16Array): void {
    this.levels.push(rmsDbfs(window));
    this.timeline.setTimeout(() => {
      const level = this.levels.shift();
      if (level !== undefined) this.settle(level >= ENERGY_VAD_SPEECH_DBFS ? 1 : 0);
    }, LATE_MS);
  }
  protected resetModel(): void {
    this.levels.length = 0;
  }
}

/**
 * Scores like a starved batcher: a call's windows wait until four are in and are then scored together, 16 ms
 * later. A loud window scores as speech except the last of each four (a plosive, a breath: the model's score
 * dips inside real speech).
 */
class BurstDetector extends LateEnergyDetector {
  private index = 0;
  protected override acceptWindow(window: Int16Array): void {
    this.levels.push(rmsDbfs(window));
    if (++this.index % 4 !== 0) return;
    this.timeline.setTimeout(() => {
      for (const [i, level] of this.levels.splice(0).entries()) this.settle(level >= ENERGY_VAD_SPEECH_DBFS && i !== 3 ? 1 : 0);
    }, LATE_MS);
  }
}

/**
 * LateEnergyDetector that honours `expedite`: while on, a window is scored as soon as it is cut (as the batcher
 * sends an urgent window at once), else LATE_MS later. Records each call as [on, stream ms pushed so far].
 */
class ExpeditableDetector extends LateEnergyDetector {
  readonly expedites: Array<[boolean, number]> = [];
  private urgent = false;
  /** Stream ms pushed so far (before the frame being pushed). */
  pushedMs = 0;
  override push(pcm: Int16Array) {
    this.pushedMs += pcm.length / 8;
    return super.push(pcm);
  }
  expedite(on: boolean): void {
    this.expedites.push([on, this.pushedMs]);
    this.urgent = on;
  }
  protected override acceptWindow(window: Int16Array): void {
    if (!this.urgent) return super.acceptWindow(window);
    this.levels.push(rmsDbfs(window));
    // in order: after the windows still waiting for their late score
    const level = this.levels.length === 1 ? this.levels.shift() : undefined;
    if (level !== undefined) this.settle(level >= ENERGY_VAD_SPEECH_DBFS ? 1 : 0);
  }
}

function run(late: boolean | ((o: VadOptions, timeline: VirtualTimeline) => VoiceActivityDetector)) {
  const timeline = new VirtualTimeline();
  const t0 = timeline.now();
  const lm = new ScriptedLanguageModel({ sleep: timeline.sleep })
    .on({ system: 'make sure you are speaking with', user: /this is Dana/ }, { firstDelayMs: 200, text: 'Thank you, Dana.', toolCalls: [{ name: 'identity_confirmed' }] })
    .on({ system: 'Remind Dana', user: /this is Dana/ }, { firstDelayMs: 200, text: 'Your cleaning is on Tuesday at 3pm. Can you still make it?' })
    .on({ system: 'Remind Dana', user: /what day/ }, { firstDelayMs: 200, text: 'Tuesday at 3pm.' });
  const stt = new ScriptedSpeechToText({ sleep: timeline.sleep, finalDelayMs: 100, interimEveryMs: 0, utterances: ['Yes, this is Dana.', 'Sorry, what day?'] });
  const tts = new ScriptedTextToSpeech({ sleep: timeline.sleep, firstAudioDelayMs: 50, msPerChar: 40 });
  const channel = new MemoryMediaChannel(timeline, {});
  const graph = WorkflowGraph.fromDefinition(structuredClone(exampleWorkflowDefinition));
  const conversation = Conversation.start({ graph, model: { lm, model: 'test-model' }, clock: timeline.clock, initialContext: { first_name: 'Dana', appointment_time: 'Tuesday at 3pm' } });
  const detectors: VoiceActivityDetector[] = [];
  const make = typeof late === 'function' ? late : late ? (o: VadOptions) => new LateDetectorFactory(timeline).create(o) : null;
  const vad: VoiceActivityDetectorFactory = make ? { create: (o) => detectors[detectors.push(make(o, timeline)) - 1] } : new EnergyVoiceActivityDetectorFactory();
  const session = new VoiceSession({
    id: 'call-1', channel, conversation, graph, stt, tts, vad, pacer: new PlayoutPacer(timeline), timers: timeline, clock: timeline.clock,
    sink: { recording: new MemoryRecordingOutput(), onEnded: async () => undefined },
  });
  const seen: Array<{ type: string; at: number; e: Record<string, unknown> }> = [];
  for (const type of ['speech_started', 'speech_stopped', 'user_turn', 'interruption'] as const) {
    session.events.on(type, (e: VoiceSessionEventMap[typeof type]) => seen.push({ type, at: timeline.now() - t0, e: e as unknown as Record<string, unknown> }));
  }
  session.start();
  channel.startCaller();
  return { timeline, t0, channel, session, seen, detectors };
}

class LateDetectorFactory implements VoiceActivityDetectorFactory {
  constructor(private readonly timeline: VirtualTimeline) {}
  create(options: VadOptions): VoiceActivityDetector {
    return new LateEnergyDetector(options, this.timeline);
  }
}

async function converse(late: boolean) {
  const s = run(late);
  const untilListening = async () => {
    await s.timeline.until(() => s.session.state === 'speaking', 30_000);
    await s.timeline.until(() => s.session.state === 'listening', 30_000);
  };
  // the caller's audio at the same instants in both runs, whatever the agent does
  const at = async (ms: number) => s.timeline.advance(s.t0 + ms - s.timeline.now());
  await untilListening(); // the greeting
  await at(4000);
  s.channel.speak(800); // a turn
  await at(7000); // into the reply
  expect(s.session.state).toBe('speaking');
  s.channel.speak(700); // talks over it
  await s.timeline.until(() => s.channel.clears.length > 0, 3000);
  await untilListening();
  return s;
}

describe('VoiceSession with a detector that scores windows later than their audio', () => {
  it('keeps onsets and ends of speech in stream time; endpointing and barge-in act the same, at most the delay later', async () => {
    const sync = await converse(false);
    const late = await converse(true);
    const pick = (s: typeof sync, type: string) => s.seen.filter((x) => x.type === type);
    // onsets and ends of speech: the same instants
    expect(pick(late, 'speech_started').map((x) => x.e.atMs)).toEqual(pick(sync, 'speech_started').map((x) => x.e.atMs));
    expect(pick(late, 'speech_stopped').map((x) => x.e.endOfSpeechMs)).toEqual(pick(sync, 'speech_stopped').map((x) => x.e.endOfSpeechMs));
    expect(pick(sync, 'speech_started').length).toBeGreaterThanOrEqual(2);
    // learned of no sooner, and later by no more than the scoring delay plus a frame (at the same frame when the
    // windows before it were scored by then: the silence that completes the hangover needs no score of its own)
    const stopLag = pick(late, 'speech_stopped').map((x, i) => x.at - pick(sync, 'speech_stopped')[i].at);
    for (const lag of stopLag) {
      expect(lag).toBeGreaterThanOrEqual(0);
      expect(lag).toBeLessThanOrEqual(LATE_MS + 20);
    }
    // the same turns, and the barge-in still cuts the reply
    expect(pick(late, 'user_turn').map((x) => x.e.text)).toEqual(['Yes, this is Dana.', 'Sorry, what day?']);
    expect(pick(late, 'user_turn').map((x) => x.e.text)).toEqual(pick(sync, 'user_turn').map((x) => x.e.text));
    const [li] = pick(late, 'interruption');
    const [si] = pick(sync, 'interruption');
    expect(li.at - si.at).toBeGreaterThanOrEqual(0);
    // the barge-in is decided when the score comes, not at the next caller frame
    expect(li.at - si.at).toBeLessThanOrEqual(LATE_MS);
  });

  it('judges every window a batch scored, not only the newest: a dip at the end of a batch does not restart the barge-in', async () => {
    const s = run((o, timeline) => new BurstDetector(o, timeline));
    await s.timeline.until(() => s.session.state === 'speaking', 30_000); // the greeting
    const onset = s.timeline.now();
    s.channel.speak(800); // talks over it
    await s.timeline.until(() => s.channel.clears.length > 0, 2000);
    const [cut] = s.seen.filter((x) => x.type === 'interruption');
    expect(cut).toBeDefined();
    // 300 ms of speech, then at most a batch of four windows and its wait, and a frame; judging only the newest
    // verdict (a dip, every time) dropped the sustained speech every 100 ms and never let it reach 300 ms
    expect(cut.at - (onset - s.t0)).toBeGreaterThanOrEqual(300);
    expect(cut.at - (onset - s.t0)).toBeLessThanOrEqual(300 + 4 * 32 + LATE_MS + 20);
  });

  it('asks the detector to hurry only for the barge-in\'s last stretch: the clear comes when the sound reached the minimum, not a batch later', async () => {
    const sync = await converse(false);
    const s = run((o, timeline) => new ExpeditableDetector(o, timeline));
    const untilListening = async () => {
      await s.timeline.until(() => s.session.state === 'speaking', 30_000);
      await s.timeline.until(() => s.session.state === 'listening', 30_000);
    };
    const at = async (ms: number) => s.timeline.advance(s.t0 + ms - s.timeline.now());
    await untilListening();
    await at(4000);
    s.channel.speak(800); // a turn: nothing to hurry (no barge-in is armed)
    await at(7000);
    const d = s.detectors[0] as ExpeditableDetector;
    expect(d.expedites).toEqual([]);
    expect(s.session.state).toBe('speaking');
    const onsetStream = d.pushedMs; // the speech starts with the next frame
    s.channel.speak(700); // talks over the reply
    await s.timeline.until(() => s.channel.clears.length > 0, 3000);
    // on once, when the loud run was within two windows (64 ms) of 300 ms; off when the barge-in was decided
    expect(d.expedites.map(([on]) => on)).toEqual([true, false]);
    const [[, onAt], [, offAt]] = d.expedites;
    // (told before the frame is pushed: the windows that frame completes are the first urgent ones)
    expect(onAt + 20 - onsetStream).toBeGreaterThanOrEqual(300 - 64);
    expect(onAt + 20 - onsetStream).toBeLessThan(300 - 64 + 20); // the first frame past it
    expect(offAt - onsetStream).toBeGreaterThanOrEqual(300);
    expect(offAt - onsetStream).toBeLessThan(300 + 20);
    // decided at the same instant as with a detector that scores during the push: the late score did not delay it
    const cut = (r: typeof sync) => r.seen.filter((x) => x.type === 'interruption')[0].at;
    expect(cut(s)).toBe(cut(sync));
    const unhurried = await converse(true);
    expect(cut(unhurried)).toBeGreaterThan(cut(sync));
  });

  it('the session closes its detector when the call ends: no event after the end', async () => {
    const s = run(true);
    await s.timeline.until(() => s.session.state === 'speaking', 30_000);
    s.channel.hangUpFromCaller();
    await s.session.ended;
    expect(s.detectors[0].push(new Int16Array(2560).fill(8000))).toEqual([]);
    await s.timeline.advance(100);
    expect(s.detectors[0].speaking).toBe(false);
  });
});
