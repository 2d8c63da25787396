import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HmacUrlSigner } from '../../adapters/crypto/node-crypto.js';
import { LocalObjectStore } from '../../adapters/files/local/local-object-store.js';
import { silentLogger } from '../ports/logger.port.js';
import type { NormalizedCallEvent } from '../ports/telephony-provider.port.js';
import type { ObjectStore } from '../ports/object-store.port.js';
import { MediaRecording } from './media-recording.js';
import { MediaSession, MULAW_8K_MONO, type MediaFraming } from './media-session.js';
import { MediaTokens } from './media-token.js';
import { MULAW_WAV_HEADER_BYTES, mulawWavHeader } from './media-wav.js';
import { alawEncode, mulawDecode } from '../voice/g711.js';

let now = new Date('2025-01-01T00:00:00Z');
const clock = { now: () => now };
const signer = new HmacUrlSigner('unit-test-secret-key-0123456789abcdef');

async function readAll(store: ObjectStore, key: string): Promise<Buffer> {
  const body = await store.get(key);
  if (!body) throw new Error(`no object ${key}`);
  const parts: Buffer[] = [];
  for await (const c of body) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

describe('MediaTokens', () => {
  const tokens = new MediaTokens(signer, clock, 60);
  it('accepts its own token for exactly that provider and run until it expires', () => {
    now = new Date('2025-01-01T00:00:00Z');
    const t = tokens.issue('twilio', 7);
    expect(t).toMatch(/^\d+\.[0-9a-f]{64}$/);
    expect(tokens.verify('twilio', 7, t)).toBe('valid');
    expect(tokens.verify('twilio', 8, t)).toBe('invalid');
    expect(tokens.verify('simulator', 7, t)).toBe('invalid');
    const [exp, sig] = t.split('.');
    expect(tokens.verify('twilio', 7, `${Number(exp) + 3600}.${sig}`)).toBe('invalid'); // a longer life is a forgery
    for (const garbage of [undefined, 7, '', 'x', `${exp}.`, `${exp}.${sig!.toUpperCase()}z`]) expect(tokens.verify('twilio', 7, garbage)).toBe('invalid');
    now = new Date(now.getTime() + 61_000);
    expect(tokens.verify('twilio', 7, t)).toBe('expired');
    expect(new MediaTokens(new HmacUrlSigner('another-secret-key-0123456789abcdef!!'), clock).verify('twilio', 7, t)).toBe('invalid');
  });
  it('signs a URL keeping its query', () => {
    expect(tokens.signUrl('twilio', 3, 'wss://x/media/3')).toMatch(/^wss:\/\/x\/media\/3\?token=\d+\.[0-9a-f]{64}$/);
    expect(tokens.signUrl('twilio', 3, 'wss://x/media/3?a=1')).toMatch(/\?a=1&token=/);
  });
});

describe('mulawWavHeader', () => {
  it('writes RIFF/WAVE with format 7, a fact chunk and the sizes; odd data gets a pad byte in the RIFF size', () => {
    const h = Buffer.from(mulawWavHeader(8001));
    expect(h.length).toBe(MULAW_WAV_HEADER_BYTES);
    expect(h.toString('ascii', 0, 4)).toBe('RIFF');
    expect(h.readUInt32LE(4)).toBe(MULAW_WAV_HEADER_BYTES - 8 + 8001 + 1);
    expect(h.toString('ascii', 8, 16)).toBe('WAVEfmt ');
    expect([h.readUInt32LE(16), h.readUInt16LE(20), h.readUInt16LE(22), h.readUInt32LE(24), h.readUInt32LE(28), h.readUInt16LE(32), h.readUInt16LE(34), h.readUInt16LE(36)])
      .toEqual([18, 7, 1, 8000, 8000, 1, 8, 0]);
    expect([h.toString('ascii', 38, 42), h.readUInt32LE(42), h.readUInt32LE(46)]).toEqual(['fact', 4, 8001]);
    expect([h.toString('ascii', 50, 54), h.readUInt32LE(54)]).toEqual(['data', 8001]);
    expect(() => mulawWavHeader(-1)).toThrow(RangeError);
  });
});

describe('MediaRecording and MediaSession on the local object store', () => {
  let dir: string;
  let store: LocalObjectStore;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'callplane-media-unit-'));
    store = new LocalObjectStore(dir, 'http://x', signer, clock);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('streams bytes to a raw object, then writes the WAV; asks for backpressure above the high water mark; truncates at maxBytes', async () => {
    const rec = new MediaRecording(store, { rawKey: 'r/1/raw.part', wavKey: 'r/1/rec.wav', highWaterBytes: 1000, maxBytes: 2501 }, silentLogger);
    const written: Buffer[] = [];
    let refusedOnce = false;
    for (let i = 0; i < 30; i++) {
      const chunk = Buffer.alloc(100, i);
      written.push(chunk);
      if (!rec.write(chunk)) {
        refusedOnce = true;
        await new Promise<void>((r) => rec.whenDrained(r));
      }
    }
    expect(refusedOnce).toBe(true);
    const result = await rec.finish();
    expect(result).toEqual({ key: 'r/1/rec.wav', dataBytes: 2501, truncated: true });
    expect(await rec.finish()).toBe(result);
    const wav = await readAll(store, 'r/1/rec.wav');
    expect(wav.length).toBe(MULAW_WAV_HEADER_BYTES + 2501 + 1);
    expect(wav.subarray(MULAW_WAV_HEADER_BYTES, MULAW_WAV_HEADER_BYTES + 2501)).toEqual(Buffer.concat(written).subarray(0, 2501));
    expect(await store.stat('r/1/raw.part')).toBeNull();
  });

  it('stores nothing when no audio arrived', async () => {
    const rec = new MediaRecording(store, { rawKey: 'r/2/raw.part', wavKey: 'r/2/rec.wav', highWaterBytes: 1000, maxBytes: 1000 }, silentLogger);
    expect(await rec.finish()).toBeNull();
    expect(await store.stat('r/2/rec.wav')).toBeNull();
  });

  function harness(framing: Partial<MediaFraming> = {}, authorizedByUrl = false) {
    const applied: NormalizedCallEvent[] = [];
    const attached: unknown[] = [];
    const tokens = new MediaTokens(signer, clock, 60);
    const session = new MediaSession(
      {
        store, clock, log: silentLogger, tokens,
        applyStatus: { execute: async (_p: string, e: NormalizedCallEvent) => void applied.push(e) },
        runs: { attachArtifacts: async (_org: number, _run: number, patch: unknown) => (attached.push(patch), null) },
      },
      { id: 41, organizationId: 5 },
      { provider: 'twilio', startMeansInProgress: false, stopMeansCompleted: false, ...framing },
      { authorizedByUrl, maxRecordingBytes: 1_000_000, highWaterBytes: 64 * 1024 },
    );
    return { session, applied, attached, token: tokens.issue('twilio', 41) };
  }

  it('completes the run on stop only for providers whose stream is the whole call, with the stream duration', async () => {
    now = new Date('2025-01-01T00:00:00Z');
    const { session, applied, attached, token } = harness({ startMeansInProgress: true, stopMeansCompleted: true });
    expect(session.onAudio('inbound', new Uint8Array(10))).toBe(true); // before start: ignored
    expect(session.onStart({ tracks: ['inbound'], format: MULAW_8K_MONO, parameters: { token } })).toEqual({ ok: true });
    session.onAudio('inbound', new Uint8Array(160).fill(1));
    now = new Date(now.getTime() + 12_400);
    const summary = await session.onStop('closed');
    expect(summary).toMatchObject({ started: true, inboundBytes: 160, ignoredMessages: 1, recording: { key: 'runs/5/41/recording.wav', dataBytes: 160 } });
    expect(applied.map((e) => e.kind === 'status' && [e.status, e.outcome, e.durationSeconds])).toEqual([['in_progress', undefined, undefined], ['completed', 'completed', 12]]);
    expect(attached).toEqual([expect.objectContaining({ recordingKey: 'runs/5/41/recording.wav', annotations: { media_stream: expect.objectContaining({ end_reason: 'closed', duration_ms: 12_400 }) } })]);
    expect(await session.onStop('shutdown')).toBe(summary);
  });

  it('does not record a format it cannot convert (stereo, unknown codecs), and says why; never touches the status when the framing says so', async () => {
    for (const format of [{ encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 2 }, { encoding: 'audio/opus', sampleRate: 48000, channels: 1 }, { encoding: 'audio/x-mulaw', sampleRate: 16000, channels: 1 }]) {
      const { session, applied, attached, token } = harness();
      session.onStart({ tracks: ['inbound'], format, parameters: { token } });
      session.onAudio('inbound', new Uint8Array(320));
      const summary = await session.onStop('stop');
      expect(summary.recording).toBeNull();
      expect(applied).toEqual([]);
      const reason = `unsupported media format ${format.encoding}/${format.sampleRate}/${format.channels}`;
      expect(attached).toEqual([expect.objectContaining({ annotations: { media_stream: expect.objectContaining({ not_recorded_reason: reason }) } })]);
      expect(attached[0]).not.toHaveProperty('recordingKey');
    }
  });

  it('records L16 16 kHz (Vonage) and A-law as the μ-law 8 kHz WAV: decoded, resampled across frames, re-encoded', async () => {
    const { session, token } = harness();
    session.onStart({ tracks: ['inbound'], format: { encoding: 'audio/l16', sampleRate: 16000, channels: 1 }, parameters: { token } });
    // one second of a 400 Hz tone at 16 kHz, in 640-byte (20 ms) frames as Vonage sends them
    const pcm = new Int16Array(16000).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 400 * i) / 16000)));
    const bytes = new Uint8Array(pcm.buffer);
    for (let at = 0; at < bytes.length; at += 640) session.onAudio('inbound', bytes.slice(at, at + 640));
    const summary = await session.onStop('stop');
    expect(summary).toMatchObject({ inboundBytes: 32000, recording: { dataBytes: 8000 } });
    const wav = await readAll(store, summary.recording!.key);
    const data = mulawDecode(wav.subarray(MULAW_WAV_HEADER_BYTES, MULAW_WAV_HEADER_BYTES + 8000));
    // past the filter's delay the tone is there at its amplitude (μ-law keeps it within a few percent)
    const peak = data.subarray(800).reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    expect(peak).toBeGreaterThan(7400);
    expect(peak).toBeLessThan(8600);
    // and at its frequency: 400 Hz at 8 kHz is 20 samples a period, so 80 zero crossings per 100 ms
    let crossings = 0;
    for (let i = 1001; i < 1801; i++) if ((data[i - 1]! < 0) !== (data[i]! < 0)) crossings++;
    expect(crossings).toBeGreaterThanOrEqual(79);
    expect(crossings).toBeLessThanOrEqual(81);

    const alaw = harness();
    alaw.session.onStart({ tracks: ['inbound'], format: { encoding: 'audio/x-alaw', sampleRate: 8000, channels: 1 }, parameters: { token: alaw.token } });
    alaw.session.onAudio('inbound', alawEncode(Int16Array.of(0, 1000, -1000, 8000)));
    const a = await alaw.session.onStop('stop');
    const got = mulawDecode((await readAll(store, a.recording!.key)).subarray(MULAW_WAV_HEADER_BYTES, MULAW_WAV_HEADER_BYTES + 4));
    const want = [0, 1000, -1000, 8000];
    expect([...got].map((v, i) => Math.abs(v - want[i]!) <= Math.abs(want[i]!) * 0.07 + 16)).toEqual([true, true, true, true]);
  });

  it('refuses a start without a valid token unless the URL carried one, and attaches nothing for a stream that never started', async () => {
    const refused = harness();
    expect(refused.session.onStart({ tracks: ['inbound'], format: MULAW_8K_MONO, parameters: {} })).toEqual({ ok: false, reason: 'token invalid' });
    expect(await refused.session.onStop('unauthorized')).toMatchObject({ started: false, recording: null });
    expect(refused.attached).toEqual([]);
    const byUrl = harness({}, true);
    expect(byUrl.session.onStart({ tracks: ['inbound'], format: MULAW_8K_MONO, parameters: {} })).toEqual({ ok: true });
    await byUrl.session.onStop('stop');
  });
});
