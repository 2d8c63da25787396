import { describe, expect, it } from '@jest/globals';
import { ScriptedTextToSpeech } from '../../test/fakes/scripted-speech.js';
import { VirtualTimeline } from '../../test/fakes/virtual-timeline.js';
import { MULAW_8K } from './audio-format.js';
import { PreparedSpeech, speechPieces } from './prepared-speech.js';

const GREETING = 'Hi, this is Ava from Brightsmile Dental. Am I speaking with Dana?';

async function collect(audio: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const c of audio) parts.push(c);
  return Buffer.concat(parts);
}

describe('PreparedSpeech', () => {
  it('cuts a line into the pieces a spoken line gets (the first at a clause) and synthesizes them in order', async () => {
    expect(speechPieces(GREETING)).toEqual(['Hi, this is Ava from Brightsmile Dental.', 'Am I speaking with Dana?']);
    const timeline = new VirtualTimeline();
    const tts = new ScriptedTextToSpeech({ sleep: timeline.sleep, firstAudioDelayMs: 50, msPerChar: 40 });
    const prepared = PreparedSpeech.start(tts, GREETING, { preferredFormat: MULAW_8K, voice: 'ava' });
    await timeline.advance(500);
    await prepared.settled;
    expect(tts.requests.map((r) => [r.text, r.voice])).toEqual([[speechPieces(GREETING)[0], 'ava'], [speechPieces(GREETING)[1], 'ava']]);
    // each piece's audio is exactly what a live synthesis gives, taken once, in order
    const first = prepared.take(speechPieces(GREETING)[0]!)!;
    expect(first).not.toBeNull();
    expect(await collect((await first).chunks)).toEqual(Buffer.from(tts.render(speechPieces(GREETING)[0]!, MULAW_8K)));
    expect(prepared.take(speechPieces(GREETING)[0]!)).toBeNull();
    expect(await collect((await prepared.take(speechPieces(GREETING)[1]!)!).chunks)).toEqual(Buffer.from(tts.render(speechPieces(GREETING)[1]!, MULAW_8K)));
    // handed over, the audio is not kept (the session holds its greeting's object for the whole call)
    expect(prepared.heldBytes).toBe(0);
  });

  it('holds only audio not yet handed over; abort lets go of the pieces never taken', async () => {
    const timeline = new VirtualTimeline();
    const tts = new ScriptedTextToSpeech({ sleep: timeline.sleep, firstAudioDelayMs: 50, msPerChar: 40 });
    const prepared = PreparedSpeech.start(tts, GREETING, { preferredFormat: MULAW_8K });
    await timeline.advance(500);
    await prepared.settled;
    const [first, second] = speechPieces(GREETING).map((t) => tts.render(t, MULAW_8K).length);
    expect(prepared.heldBytes).toBe(first! + second!);
    await collect((await prepared.take(speechPieces(GREETING)[0]!)!).chunks);
    expect(prepared.heldBytes).toBe(second);
    prepared.abort(); // the call ended before the second piece was asked for
    expect(prepared.heldBytes).toBe(0);
  });

  it('hands over audio still arriving: buffered chunks at once, the rest as it comes', async () => {
    const timeline = new VirtualTimeline();
    const tts = new ScriptedTextToSpeech({ sleep: timeline.sleep, firstAudioDelayMs: 50, msPerChar: 40, realtimeFactor: 1 });
    const prepared = PreparedSpeech.start(tts, 'Hello there, nice to meet you today.', { preferredFormat: MULAW_8K });
    await timeline.advance(10); // the request went out; no audio yet
    const audio = prepared.take('Hello there, nice to meet you today.')!;
    let done = false;
    const all = (async () => collect((await audio).chunks))().then((b) => {
      done = true;
      return b;
    });
    await timeline.advance(100);
    expect(done).toBe(false);
    await timeline.advance(5000);
    expect(await all).toEqual(Buffer.from(tts.render('Hello there, nice to meet you today.', MULAW_8K)));
  });

  it('is not taken for another text, after a failure or after abort (the session synthesizes live then)', async () => {
    const timeline = new VirtualTimeline();
    const failing = new ScriptedTextToSpeech({ sleep: timeline.sleep, failOn: { match: /Dental/, error: new Error('quota') } });
    const prepared = PreparedSpeech.start(failing, GREETING, { preferredFormat: MULAW_8K });
    await timeline.advance(100);
    expect(prepared.take(speechPieces(GREETING)[0]!)).toBeNull();
    expect(failing.requests).toHaveLength(1); // the pieces after a failed one are not tried

    const tts = new ScriptedTextToSpeech({ sleep: timeline.sleep, firstAudioDelayMs: 50 });
    const other = PreparedSpeech.start(tts, GREETING, { preferredFormat: MULAW_8K });
    expect(other.take('Hello, this is someone else.')).toBeNull();
    other.abort();
    expect(other.take(speechPieces(GREETING)[0]!)).toBeNull();
    await timeline.advance(1000);
    await other.settled;
    expect(tts.requests[0]!.signal?.aborted).toBe(true);
  });
});
