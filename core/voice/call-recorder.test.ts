import { describe, expect, it } from '@jest/globals';
import { readWav } from './wav.js';
import { CallRecorder } from './call-recorder.js';

const frame = (value: number, n = 160): Int16Array => new Int16Array(n).fill(value);

describe('CallRecorder', () => {
  it('puts a caller frame arriving at t and agent audio playing from t-20 on the same samples', () => {
    const rec = new CallRecorder({ startMs: 1000 });
    for (let t = 1020; t <= 2000; t += 20) rec.writeCaller(frame(t === 1520 ? 7 : 1), t);
    // Agent audio paced at 1480 to play at 1500, for 20 ms.
    rec.writeAgent(frame(9), 1500);
    const caller = rec.callerSamples;
    const agent = rec.agentSamples;
    const at = caller.indexOf(7);
    expect(at).toBe(4000); // 500 ms into the call
    expect(agent.indexOf(9)).toBe(at);
    const wav = readWav(rec.wav());
    expect(wav.channels).toBe(2);
    expect(wav.sampleRate).toBe(8000);
    expect(wav.samples[2 * at]).toBe(7);
    expect(wav.samples[2 * at + 1]).toBe(9);
    expect(wav.samples.length).toBe(2 * 8000);
  });

  it('appends contiguous agent frames back to back, and a clear removes what was sent ahead but not played', () => {
    const rec = new CallRecorder({ startMs: 0 });
    rec.writeCaller(frame(0), 20);
    for (let i = 0; i < 10; i++) rec.writeAgent(frame(5), 20 + i * 20); // 200 ms paced ahead
    expect(rec.agentSamples.length).toBe(160 + 1600);
    rec.clear(60); // barge-in 40 ms into the agent's audio
    expect(rec.agentSamples.length).toBe(480);
  });

  it('fills an inbound gap with silence so the caller leg keeps to wall time', () => {
    const rec = new CallRecorder({ startMs: 0 });
    rec.writeCaller(frame(1), 20);
    rec.writeCaller(frame(2), 1020); // a second with no frames
    expect(rec.callerSamples.length).toBe(8160);
    expect(rec.callerSamples[8000]).toBe(2);
    expect(rec.callerSamples[4000]).toBe(0);
    expect(rec.durationMs).toBe(1020);
  });
});
