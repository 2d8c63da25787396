import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderApiError } from '../../core/errors.js';
import type { SttEvent } from '../../core/ports/speech-to-text.port.js';
import { MULAW_8K } from '../../core/voice/audio-format.js';
import { speechProviderDeps } from '../../plugins/ai-speech-services.js';
import { collectUntil, finalText, speak, speechToTextContract } from '../../test/contracts/speech-to-text.contract.js';
import { FakeDeepgramServer } from '../../test/fakes/deepgram/fake-deepgram-server.js';
import { encodeSamples, frames, silenceAudio, speechAudio } from '../../test/fakes/scripted-speech.js';
import WebSocket from 'ws';
import { DeepgramSpeechToText, hasSound, type DeepgramSttOptions } from './deepgram-stt.client.js';

const { checkConnect } = speechProviderDeps(true);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

speechToTextContract('deepgram (live WebSocket against the fake)', async () => {
  const fake = await FakeDeepgramServer.start();
  return {
    stt: new DeepgramSpeechToText({ apiKey: fake.key, baseUrl: fake.baseUrl, checkConnect }),
    format: MULAW_8K,
    willHear: (text) => void fake.say(text),
    dispose: () => fake.close(),
  };
});

describe('deepgram live transcription client', () => {
  let fake: FakeDeepgramServer;
  const client = (o: Partial<DeepgramSttOptions> = {}) => new DeepgramSpeechToText({ apiKey: fake.key, baseUrl: fake.baseUrl, checkConnect, ...o });
  beforeAll(async () => {
    fake = await FakeDeepgramServer.start({ idleTimeoutMs: 400 });
  });
  afterAll(() => fake.close());
  afterEach(() => {
    fake.connections.length = 0;
  });

  it('connects with the documented query and Token header, streams binary audio, maps interim/final/SpeechStarted/UtteranceEnd', async () => {
    fake.say('i would like to reschedule');
    const stream = await client({ endpointingMs: 300 }).open({ format: MULAW_8K, language: 'en' });
    const events = stream.events[Symbol.asyncIterator]();
    speak(stream, MULAW_8K, 800, 400); // the fake's endpointing (300 ms of silence) ends it: speech_final
    const seen = await collectUntil(events, (e) => e.type === 'final' && e.speechFinal);
    expect(seen[0]).toEqual({ type: 'speech_started' });
    expect(seen.filter((e) => e.type === 'interim').length).toBeGreaterThan(0);
    expect(finalText(seen)).toBe('i would like to reschedule');
    for (const f of frames(silenceAudio(MULAW_8K, 1100), MULAW_8K)) stream.push(f);
    await collectUntil(events, (e) => e.type === 'utterance_end');
    const conn = fake.connections[0]!;
    expect(conn.authorization).toBe(`Token ${fake.key}`);
    expect(conn.query).toMatchObject({
      encoding: 'mulaw', sample_rate: '8000', channels: '1', model: 'nova-3', language: 'en', interim_results: 'true', punctuate: 'true',
      smart_format: 'true', endpointing: '300', utterance_end_ms: '1000', vad_events: 'true',
    });
    await stream.close();
    // every byte pushed went out (the last partial chunk before the CloseStream)
    expect(conn.audioBytes).toBe(8 * (800 + 400 + 1100));
    expect(conn.controls).toEqual(['CloseStream']);
    expect(conn.sent.at(-1)).toMatchObject({ type: 'Metadata' });
    await sleep(20);
    expect(conn.closeCode).toBe(1000);
  });

  it('declares interim results (the barge-in waits for words), and the fake can recognize each connection\'s audio itself', async () => {
    const recognizer = await FakeDeepgramServer.start({ transcribe: (audio) => (audio.length > 0 ? 'uh-huh' : '') });
    try {
      recognizer.say('from the script');
      const stream = await new DeepgramSpeechToText({ apiKey: recognizer.key, baseUrl: recognizer.baseUrl, checkConnect }).open({ format: MULAW_8K });
      expect(stream.interimResults).toBe(true);
      const events = stream.events[Symbol.asyncIterator]();
      speak(stream, MULAW_8K, 400, 40);
      stream.finalize();
      const seen = await collectUntil(events, (e) => e.type === 'final');
      expect(finalText(seen)).toBe('uh-huh');
      await stream.close();
    } finally {
      await recognizer.close();
    }
  });

  it('finalize() sends Finalize once per utterance; its answer (from_finalize) is speech-final', async () => {
    fake.say('yes please');
    const stream = await client().open({ format: MULAW_8K });
    const events = stream.events[Symbol.asyncIterator]();
    speak(stream, MULAW_8K, 400, 40);
    stream.finalize();
    stream.finalize();
    const seen = await collectUntil(events, (e) => e.type === 'final');
    expect(seen.at(-1)).toEqual({ type: 'final', text: 'yes please', speechFinal: true });
    expect(fake.connections[0]!.controls).toEqual(['Finalize']);
    await stream.close();
  });

  it('sends audio in 40 ms messages (two carrier frames), what is left before a Finalize or after 40 ms without more; sendChunkMs 0 sends each push', async () => {
    const stream = await client().open({ format: MULAW_8K });
    const frame = () => speechAudio(MULAW_8K, 20); // 20 ms of sound
    for (let i = 0; i < 5; i++) stream.push(frame());
    const conn = fake.connections[0]!;
    await until('three messages', () => conn.audioMessages.length === 3);
    // the first sound goes at once (nothing was said before it), then two frames a message; the fifth waits
    expect(conn.audioMessages).toEqual([160, 320, 320]);
    stream.push(frame());
    stream.finalize();
    await until('the Finalize', () => conn.controls.includes('Finalize'));
    expect(conn.audioMessages).toEqual([160, 320, 320, 160]); // sent before the Finalize
    stream.push(frame());
    await sleep(120); // no more audio: the partial chunk goes out on its own
    expect(conn.audioMessages).toEqual([160, 320, 320, 160, 160]);
    await stream.close();

    const each = await client({ sendChunkMs: 0 }).open({ format: MULAW_8K });
    for (let i = 0; i < 3; i++) each.push(frame());
    const conn2 = fake.connections[1]!;
    await until('three messages', () => conn2.audioMessages.length === 3);
    expect(conn2.audioMessages).toEqual([160, 160, 160]);
    await each.close();
  });

  it('keeps at most maxBufferedMs of sent audio, in buffers of its own: a long stream among other calls pins no shared pool slabs', async () => {
    const own = await FakeDeepgramServer.start(); // its own server: this much audio must not spill into the next tests
    const stream = await new DeepgramSpeechToText({ apiKey: own.key, baseUrl: own.baseUrl, checkConnect }).open({ format: MULAW_8K });
    const frame = () => speechAudio(MULAW_8K, 20);
    const others: Buffer[] = [];
    // a minute of speech with no final (nothing confirms it); between frames other calls take small buffers
    // from node's shared pool, as they do in a process serving many calls
    let held = 0;
    for (let i = 0; i < 3000; i++) {
      stream.push(frame());
      others.push(Buffer.from(new Uint8Array(3000)), Buffer.from(new Uint8Array(3000)));
      if (others.length > 64) others.splice(0, 2);
      held = Math.max(held, (stream as unknown as { heldBytes: number }).heldBytes);
    }
    // the default maxBufferedMs is 5 s: 40 kB of μ-law, in 40 ms messages (a pooled slice would pin 8 kB each:
    // ~1 MB), and the frame waiting for its message (a pooled copy: one slab for a moment)
    expect(held).toBeLessThanOrEqual(40_000 + 320 + 8192);
    expect(held).toBeGreaterThanOrEqual(39_000);
    await stream.close();
    await own.close();
  });

  it('after quietAfterMs without sound sends 200 ms messages, and the first sound at once with the quiet audio before it', async () => {
    fake.say('yes');
    const stream = await client({ quietAfterMs: 100 }).open({ format: MULAW_8K });
    const events = stream.events[Symbol.asyncIterator]();
    const conn = fake.connections[0]!;
    const silence = () => silenceAudio(MULAW_8K, 20);
    // quiet from the start: ten frames of silence are one 200 ms message
    for (let i = 0; i < 12; i++) stream.push(silence());
    await until('one message', () => conn.audioMessages.length === 1);
    expect(conn.audioMessages).toEqual([1600]);
    // sound: the two quiet frames buffered and the sound go out together, at once
    stream.push(speechAudio(MULAW_8K, 20));
    await until('two messages', () => conn.audioMessages.length === 2);
    expect(conn.audioMessages).toEqual([1600, 480]);
    // while the sound lasts, and for quietAfterMs (100 ms) after it, 40 ms messages
    for (let i = 0; i < 4; i++) stream.push(speechAudio(MULAW_8K, 20));
    for (let i = 0; i < 6; i++) stream.push(silence());
    await until('seven messages', () => conn.audioMessages.length === 7);
    expect(conn.audioMessages).toEqual([1600, 480, 320, 320, 320, 320, 320]);
    // quiet again: the next messages are 200 ms
    for (let i = 0; i < 20; i++) stream.push(silence());
    await until('nine messages', () => conn.audioMessages.length === 9);
    expect(conn.audioMessages.slice(7)).toEqual([1600, 1600]);
    // the fake heard the speech and its silence: its endpointing's final (within the 40 ms messages)
    const seen = await collectUntil(events, (e) => e.type === 'final' && e.speechFinal);
    expect(finalText(seen)).toBe('yes');
    // a Finalize still sends what is buffered first
    stream.push(silence());
    stream.finalize();
    await until('the Finalize', () => conn.controls.includes('Finalize'));
    expect(conn.audioMessages.slice(9)).toEqual([160]);
    expect(conn.audioBytes).toBe(160 * (12 + 1 + 4 + 6 + 20 + 1));
    await stream.close();
  });

  it('keeps 40 ms messages until Deepgram\'s own utterance_end_ms has passed, when it is longer than 1 s', async () => {
    const stream = await client({ utteranceEndMs: 1500 }).open({ format: MULAW_8K });
    const conn = fake.connections[0]!;
    stream.push(speechAudio(MULAW_8K, 20));
    for (let i = 0; i < 70; i++) stream.push(silenceAudio(MULAW_8K, 20)); // 1.4 s of quiet: not yet quiet enough
    await until('36 messages', () => conn.audioMessages.length === 36);
    expect(conn.audioMessages).toEqual([160, ...Array(35).fill(320)]);
    // four more frames in 40 ms messages; from 1.5 s of quiet on, 200 ms messages (the 16th frame waits)
    for (let i = 0; i < 15; i++) stream.push(silenceAudio(MULAW_8K, 20));
    await until('39 messages', () => conn.audioMessages.length === 39);
    expect(conn.audioMessages.slice(36)).toEqual([320, 320, 1600]);
    await stream.close();
  });

  it('judges sound by mean level in each encoding: silence and a faint hiss are quiet, speech is not', () => {
    for (const format of [MULAW_8K, { encoding: 'alaw', sampleRate: 8000 } as const, { encoding: 'l16', sampleRate: 16000 } as const]) {
      expect(hasSound(silenceAudio(format, 20), format)).toBe(false);
      expect(hasSound(speechAudio(format, 20), format)).toBe(true);
      const faint = new Int16Array(format.sampleRate / 50).map((_, i) => (i % 2 ? 40 : -40)); // mean |sample| 40
      expect(hasSound(encodeSamples(faint, format), format)).toBe(false);
      const audible = faint.map((v) => v * 2); // 80
      expect(hasSound(encodeSamples(audible, format), format)).toBe(true);
    }
  });

  it('the fake hears audio in 20 ms pieces: its endpointing counts the silence from inside a message, not from its end', async () => {
    const url = `${fake.baseUrl.replace(/^http/, 'ws')}/v1/listen?encoding=mulaw&sample_rate=8000&endpointing=40`;
    const ws = new WebSocket(url, { headers: { authorization: `Token ${fake.key}` } });
    const got: Array<{ type: string; speech_final?: boolean }> = [];
    ws.on('message', (m) => got.push(JSON.parse(String(m)) as { type: string; speech_final?: boolean }));
    await new Promise((r) => ws.once('open', r));
    // one 40 ms message: 20 ms of speech, then 20 ms of silence; then 20 ms more of silence: 40 ms of silence in all
    ws.send(Buffer.concat([speechAudio(MULAW_8K, 20), silenceAudio(MULAW_8K, 20)]));
    ws.send(silenceAudio(MULAW_8K, 20));
    await sleep(50);
    ws.close();
    expect(got.filter((m) => m.type === 'Results' && m.speech_final)).toHaveLength(1);
  });

  it('sends KeepAlive while no audio flows, so an idle stream outlives the server\'s idle timeout', async () => {
    const stream = await client({ keepAliveMs: 100 }).open({ format: MULAW_8K });
    await sleep(900); // the fake closes after 400 ms without audio or KeepAlive
    const conn = fake.connections[0]!;
    expect(conn.controls.filter((c) => c === 'KeepAlive').length).toBeGreaterThanOrEqual(3);
    expect(conn.closeCode).toBeUndefined();
    expect(fake.connections).toHaveLength(1);
    await stream.close();
  });

  it('without KeepAlive the fake closes an idle stream (1011), which the client then reconnects', async () => {
    const stream = await client({ keepAliveMs: 60_000, reconnectDelayMs: 10 }).open({ format: MULAW_8K });
    await sleep(600);
    expect(fake.connections[0]!.closeCode).toBe(1011);
    expect(fake.connections.length).toBeGreaterThanOrEqual(2);
    await stream.close();
  });

  it('reconnects after an unexpected close, buffering the audio pushed meanwhile and sending it first', async () => {
    fake.say('after the drop');
    const stream = await client({ reconnectDelayMs: 400 }).open({ format: MULAW_8K });
    const events = stream.events[Symbol.asyncIterator]();
    fake.dropAll('terminate');
    // well after the client saw the drop (a loaded machine may take more than a few ms to deliver the close)
    // and well before it reconnects
    await sleep(100);
    speak(stream, MULAW_8K, 400, 40); // pushed while the connection is down
    stream.finalize();
    const seen = await collectUntil(events, (e) => e.type === 'final' && e.speechFinal);
    expect(finalText(seen)).toBe('after the drop');
    expect(fake.connections).toHaveLength(2);
    expect(fake.connections[1]!.audioBytes).toBe(8 * 440);
    expect(fake.connections[1]!.controls).toEqual(['Finalize']);
    await stream.close();
  });

  const until = async (what: string, ok: () => boolean, ms = 3000) => {
    const deadline = Date.now() + ms;
    while (!ok()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(10);
    }
  };

  it('sends again the audio the lost connection took but never finalized, and the Finalize it never answered', async () => {
    // this server answers a Finalize 300 ms late: it dies before it does
    const slow = await FakeDeepgramServer.start({ finalDelayMs: 300 });
    const stream = await new DeepgramSpeechToText({ apiKey: slow.key, baseUrl: slow.baseUrl, checkConnect, reconnectDelayMs: 100 }).open({ format: MULAW_8K });
    try {
      // each connection's fake hears the utterance afresh (its script is per utterance): the second one, from the audio sent again
      slow.say('spoken into a dying connection');
      slow.say('spoken into a dying connection');
      const events = stream.events[Symbol.asyncIterator]();
      speak(stream, MULAW_8K, 400, 40); // heard by the first connection, no final yet (40 ms of silence < endpointing)
      stream.finalize();
      await until('the first connection to take it all', () => slow.connections[0]!.audioBytes === 8 * 440 && slow.connections[0]!.controls.includes('Finalize'));
      slow.dropAll('terminate');
      const seen = await collectUntil(events, (e) => e.type === 'final' && e.speechFinal);
      expect(finalText(seen)).toBe('spoken into a dying connection'); // once: the dead connection's final never came
      expect(slow.connections).toHaveLength(2);
      expect(slow.connections[1]!.audioBytes).toBe(8 * 440);
      expect(slow.connections[1]!.controls).toEqual(['Finalize']);
    } finally {
      await stream.close();
      await slow.close();
    }
  });

  it('does not send again what a final result covered: only the audio after its end', async () => {
    fake.say('finalized before the drop');
    const stream = await client({ reconnectDelayMs: 100, keepAliveMs: 100 }).open({ format: MULAW_8K });
    try {
    const events = stream.events[Symbol.asyncIterator]();
    // 800 ms of speech, then 400 ms of silence: the fake's endpointing (300 ms) finalizes at 1,100 ms of audio
    speak(stream, MULAW_8K, 800, 400);
    const seen = await collectUntil(events, (e) => e.type === 'final' && e.speechFinal);
    expect(finalText(seen)).toBe('finalized before the drop');
    for (const f of frames(silenceAudio(MULAW_8K, 200), MULAW_8K)) stream.push(f);
    await until('the first connection to have it all', () => fake.connections[0]!.audioBytes === 8 * 1400);
    fake.dropAll('terminate');
    await until('the second connection', () => fake.connections.length === 2 && fake.connections[1]!.audioBytes > 0);
    await sleep(50);
    // the silence after the final's end (~100 ms: the fake endpoints on whole messages) and the 200 ms pushed
    // after it; not the finalized speech
    const final = fake.connections[0]!.sent.find((m) => m.type === 'Results' && m.is_final)!;
    const finalEndBytes = Math.round(((final.start as number) + (final.duration as number)) * 8000);
    expect(finalEndBytes).toBeGreaterThanOrEqual(8 * 1100);
    expect(finalEndBytes).toBeLessThanOrEqual(8 * 1140);
    expect(fake.connections[1]!.audioBytes).toBe(8 * 1400 - finalEndBytes);
    } finally {
      await stream.close();
    }
    // nothing of the finalized speech was heard again: no second final with its words
    expect(fake.connections[1]!.sent.filter((m) => m.type === 'Results' && m.is_final && (m.channel as { alternatives: Array<{ transcript: string }> }).alternatives[0]!.transcript !== '')).toHaveLength(0);
  });

  it('gives up after the bounded reconnect attempts: the events throw ProviderApiError(deepgram)', async () => {
    const stream = await client({ reconnectDelayMs: 5, maxReconnects: 2 }).open({ format: MULAW_8K });
    fake.refuseNext(2, 503);
    fake.dropAll(1011);
    const reading = (async () => {
      for await (const e of stream.events) void e;
    })();
    await expect(reading).rejects.toBeInstanceOf(ProviderApiError);
    await expect(reading).rejects.toMatchObject({ provider: 'deepgram', message: expect.stringMatching(/could not be restored.*503/) });
    expect(fake.connections).toHaveLength(1);
  });

  it('a 1008 close (the server judged our data) fails at once, without reconnecting', async () => {
    const stream = await client({ reconnectDelayMs: 5 }).open({ format: MULAW_8K });
    fake.connections[0]!.socket.close(1008, 'DATA-0000: bad audio');
    const got: SttEvent[] = [];
    const reading = (async () => {
      for await (const e of stream.events) got.push(e);
    })();
    await expect(reading).rejects.toMatchObject({ provider: 'deepgram', retryable: false, message: expect.stringContaining('DATA-0000') });
    await sleep(50);
    expect(fake.connections).toHaveLength(1);
  });

  it('a refused key is ProviderApiError with Deepgram\'s message and without the key', async () => {
    const err = await new DeepgramSpeechToText({ apiKey: 'dg-wrong-secret-123', baseUrl: fake.baseUrl, checkConnect }).open({ format: MULAW_8K }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderApiError);
    expect((err as ProviderApiError).message).toMatch(/HTTP 401.*Invalid credentials/);
    expect((err as ProviderApiError).message).not.toContain('dg-wrong-secret-123');
    expect((err as ProviderApiError).retryable).toBe(false);
  });

  it('goes through the network policy: a private address is refused before any connection unless allowed', async () => {
    const err = await new DeepgramSpeechToText({ apiKey: fake.key, baseUrl: fake.baseUrl, checkConnect: speechProviderDeps(false).checkConnect })
      .open({ format: MULAW_8K }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderApiError);
    expect((err as Error).message).toMatch(/private or loopback/);
    expect(fake.connections).toHaveLength(0);
    const metadata = await new DeepgramSpeechToText({ apiKey: 'k', baseUrl: 'ws://169.254.169.254', checkConnect }).open({ format: MULAW_8K }).catch((e: unknown) => e);
    expect((metadata as Error).message).toMatch(/cloud metadata/);
  });

  it('never follows a redirect on the upgrade', async () => {
    let followed = 0;
    const target = http.createServer();
    target.on('upgrade', (_q, socket) => {
      followed++;
      socket.destroy();
    });
    const redirector = http.createServer();
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    redirector.on('upgrade', (_q, socket) => {
      socket.end(`HTTP/1.1 302 Found\r\nLocation: ws://127.0.0.1:${(target.address() as AddressInfo).port}/v1/listen\r\nContent-Length: 0\r\n\r\n`);
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    try {
      const err = await client({ baseUrl: `ws://127.0.0.1:${(redirector.address() as AddressInfo).port}` }).open({ format: MULAW_8K }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProviderApiError);
      expect((err as Error).message).toMatch(/redirect.*not followed/);
      expect(followed).toBe(0);
    } finally {
      await new Promise((r) => redirector.close(r));
      await new Promise((r) => target.close(r));
    }
  });

  it('asks for linear16 at the pushed rate when the audio is L16', async () => {
    const stream = await client().open({ format: { encoding: 'l16', sampleRate: 16000 }, model: 'nova-2-phonecall' });
    expect(fake.connections[0]!.query).toMatchObject({ encoding: 'linear16', sample_rate: '16000', model: 'nova-2-phonecall' });
    await stream.close();
  });
});
