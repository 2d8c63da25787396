import { describe, expect, it } from '@jest/globals';
import { ScriptedTextToSpeech, speechAudio } from '../../test/fakes/scripted-speech.js';
import { VirtualTimeline } from '../../test/fakes/virtual-timeline.js';
import type { LanguageModel, StreamRequest } from '../ports/language-model.port.js';
import { MULAW_8K } from './audio-format.js';
import { MULAW_TO_PCM } from './g711.js';
import { SimulatedCaller, type SimulatedCallerOptions } from './simulated-caller.js';

const voiced = (frame: Uint8Array) => frame.reduce((n, b) => n + Math.abs(MULAW_TO_PCM[b]!), 0) / frame.length > 200;

function setup(over: Partial<SimulatedCallerOptions> = {}) {
  const t = new VirtualTimeline();
  const frames: Array<{ atMs: number; voiced: boolean }> = [];
  let hungUp = 0;
  const tts = new ScriptedTextToSpeech({ msPerChar: 20, sleep: t.sleep });
  const caller = new SimulatedCaller({ script: { lines: ['Yes it is.', 'Bye now.'] }, tts, timers: t, ...over });
  const start = t.now();
  caller.start({ send: (f) => frames.push({ atMs: t.now() - start, voiced: voiced(f) }), hangUp: () => void hungUp++ });
  /** The agent speaks `ms` of audio, 20 ms per frame in real time. */
  const agentSpeaks = async (ms: number) => {
    const audio = speechAudio(MULAW_8K, 20);
    for (let i = 0; i < ms / 20; i++) {
      caller.agentAudio(audio);
      await t.advance(20);
    }
  };
  const voicedRuns = () => {
    const runs: Array<{ from: number; to: number }> = [];
    for (const f of frames) {
      const last = runs.at(-1);
      if (f.voiced && last && f.atMs - last.to <= 60) last.to = f.atMs;
      else if (f.voiced) runs.push({ from: f.atMs, to: f.atMs });
    }
    return runs;
  };
  return { t, caller, frames, tts, agentSpeaks, voicedRuns, hungUp: () => hungUp };
}

describe('SimulatedCaller', () => {
  it('sends a 20 ms frame every 20 ms, waits for the agent to finish (700 ms quiet), says each line through the TTS, and hangs up when the lines ran out', async () => {
    const s = setup();
    await s.t.advance(400);
    expect(s.frames.length).toBe(20);
    expect(s.frames.every((f) => !f.voiced)).toBe(true);
    await s.agentSpeaks(600); // the greeting
    await s.t.advance(650);
    expect(s.voicedRuns()).toEqual([]); // not yet 700 ms of quiet
    await s.t.advance(400);
    expect(s.tts.requests.map((r) => r.text)).toEqual(['Yes it is.']);
    await s.t.advance(600);
    const [first] = s.voicedRuns();
    expect(first!.from).toBeGreaterThanOrEqual(1000 + 700);
    expect(s.caller.lineEndsMs).toHaveLength(1);
    await s.agentSpeaks(400);
    expect(s.caller.agentFirstVoiceMs).toHaveLength(1);
    await s.t.advance(1500);
    expect(s.tts.requests.map((r) => r.text)).toEqual(['Yes it is.', 'Bye now.']);
    await s.agentSpeaks(300);
    await s.t.advance(1000);
    expect(s.hungUp()).toBe(1);
    expect(await s.caller.ended).toBe('lines_done');
    const sent = s.frames.length;
    await s.t.advance(200);
    expect(s.frames.length).toBe(sent); // the clock stopped
  });

  it('hangs up when the agent stays silent for agentTimeoutMs', async () => {
    const s = setup({ agentTimeoutMs: 2000 });
    await s.t.advance(2100);
    expect(await s.caller.ended).toBe('agent_silent');
    expect(s.hungUp()).toBe(1);
  });

  it('stops without hanging up when the agent ends the call', async () => {
    const s = setup();
    await s.agentSpeaks(200);
    s.caller.agentEnded();
    expect(await s.caller.ended).toBe('agent_ended');
    expect(s.hungUp()).toBe(0);
  });

  it('after its lines, a persona is played by the model from what the agent said, until it answers [hang up]', async () => {
    const requests: StreamRequest[] = [];
    const answers = ['I would like Tuesday.', '[hang up]'];
    const lm: LanguageModel = {
      async *stream(request) {
        requests.push(request);
        yield { type: 'text', text: answers.shift()! };
      },
      complete: async () => ({ value: {}, text: '' }),
    };
    const s = setup({ script: { lines: [], persona: 'A patient who wants to reschedule' }, persona: { lm, model: 'gpt-4o-mini' } });
    s.caller.agentSaid('When would suit you?');
    await s.agentSpeaks(300);
    await s.t.advance(1500);
    expect(s.tts.requests.map((r) => r.text)).toEqual(['I would like Tuesday.']);
    expect(requests[0]!.model).toBe('gpt-4o-mini');
    expect(requests[0]!.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('A patient who wants to reschedule') });
    expect(requests[0]!.messages[1]).toEqual({ role: 'user', content: 'When would suit you?' });
    s.caller.agentSaid('Tuesday works. Goodbye.');
    await s.agentSpeaks(300);
    await s.t.advance(1200);
    expect(await s.caller.ended).toBe('lines_done');
    expect(requests[1]!.messages.slice(1)).toEqual([
      { role: 'user', content: 'When would suit you?' }, { role: 'assistant', content: 'I would like Tuesday.' }, { role: 'user', content: 'Tuesday works. Goodbye.' },
    ]);
  });
});
