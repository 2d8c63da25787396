import { describe, expect, it } from '@jest/globals';
import { SustainedSpeech } from './sustained-speech.js';

const loud = new Int16Array(160).fill(8000);
const quiet = new Int16Array(160);

describe('SustainedSpeech', () => {
  it('measures a voiced run through short gaps and forgets it after a pause', () => {
    const s = new SustainedSpeech();
    let t = 0;
    const push = (pcm: Int16Array, n: number) => {
      for (let i = 0; i < n; i++) s.push(pcm, (t += 20), 20);
    };
    push(quiet, 5);
    expect(s.durationMs).toBe(0);
    push(loud, 10);
    expect(s.startMs).toBe(100);
    expect(s.durationMs).toBe(200);
    push(quiet, 4); // 80 ms between words
    push(loud, 5);
    expect(s.durationMs).toBe(380);
    push(quiet, 6); // a pause: the run is over
    expect(s.durationMs).toBe(0);
    expect(s.startMs).toBeUndefined();
  });
});
