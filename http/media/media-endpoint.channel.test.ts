/**
 * The media endpoint's two-way channel, per carrier framing, over a real loopback WebSocket: a client speaks
 * each carrier's wire protocol; `onChannel` hands the voice side a `MediaChannel` whose audio, marks, clear
 * and hang-up arrive framed as that carrier expects, while the caller's audio is still recorded (Vonage's
 * L16 16 kHz as the μ-law 8 kHz WAV).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { HmacUrlSigner } from '../../adapters/crypto/node-crypto.js';
import { LocalObjectStore } from '../../adapters/files/local/local-object-store.js';
import { MediaSession, type MediaFraming } from '../../core/calls/media-session.js';
import { silentLogger } from '../../core/ports/logger.port.js';
import type { Run } from '../../core/runs/run.js';
import { l16Bytes } from '../../core/voice/carrier-audio.js';
import { mulawDecode, mulawEncode } from '../../core/voice/g711.js';
import type { WebSocketMediaChannel } from '../../core/voice/websocket-media-channel.js';
import { ariMediaFraming } from '../../providers/ari/ari-media.js';
import { plivoMediaFraming } from '../../providers/plivo/plivo-media.js';
import { simulatorMediaFraming } from '../../providers/simulator/simulator-media.js';
import { telnyxMediaFraming } from '../../providers/telnyx/telnyx-media.js';
import { twilioMediaFraming } from '../../providers/twilio/twilio-media.js';
import { vonageMediaFraming } from '../../providers/vonage/vonage-media.js';
import { MediaEndpoint } from './media-endpoint.js';

type Wire = { data: Buffer; binary: boolean };
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const json = (w: Wire) => JSON.parse(w.data.toString('utf8')) as Record<string, unknown>;

/** How a carrier's client speaks, and how our outbound messages look to it. */
interface CarrierClient {
  framing: MediaFraming;
  start: string | Buffer;
  /** 20 ms of caller audio (`pcm` at 8 kHz) as the carrier sends it. */
  callerFrame(pcm: Int16Array): { data: string | Buffer; binary: boolean };
  /** The agent audio bytes in one outbound message (in the carrier's format). */
  audioOf(w: Wire): Buffer | null;
  markOf(w: Wire): string | null;
  isClear(w: Wire): boolean;
  /** The carrier's echo of a played mark (native marks only). */
  echo?(name: string): string;
}

const twilioLike = (framing: MediaFraming, start: unknown, echo?: (n: string) => string): CarrierClient => ({
  framing,
  start: JSON.stringify(start),
  callerFrame: (pcm) => ({ data: JSON.stringify({ event: 'media', media: { track: 'inbound', payload: b64(mulawEncode(pcm)) } }), binary: false }),
  audioOf: (w) => (!w.binary && json(w).event === 'media' ? Buffer.from((json(w).media as { payload: string }).payload, 'base64') : null),
  markOf: (w) => (!w.binary && json(w).event === 'mark' ? (json(w).mark as { name: string }).name : null),
  isClear: (w) => !w.binary && json(w).event === 'clear',
  ...(echo ? { echo } : {}),
});

const CARRIERS: Record<string, CarrierClient> = {
  twilio: twilioLike(twilioMediaFraming, {
    event: 'start', streamSid: 'MZ1', start: { streamSid: 'MZ1', callSid: 'CA1', tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 }, customParameters: { token: 't' } },
  }, (name) => JSON.stringify({ event: 'mark', streamSid: 'MZ1', mark: { name } })),
  telnyx: twilioLike(telnyxMediaFraming, {
    event: 'start', stream_id: 'TS1', start: { call_control_id: 'v3:cc', media_format: { encoding: 'PCMU', sample_rate: 8000, channels: 1 } },
  }, (name) => JSON.stringify({ event: 'mark', stream_id: 'TS1', mark: { name } })),
  plivo: {
    framing: plivoMediaFraming,
    start: JSON.stringify({ event: 'start', start: { streamId: 'PS1', callId: 'pc1', tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000 } } }),
    callerFrame: (pcm) => ({ data: JSON.stringify({ event: 'media', streamId: 'PS1', media: { track: 'inbound', payload: b64(mulawEncode(pcm)) } }), binary: false }),
    audioOf: (w) => (!w.binary && json(w).event === 'playAudio' ? Buffer.from((json(w).media as { payload: string }).payload, 'base64') : null),
    markOf: (w) => (!w.binary && json(w).event === 'checkpoint' ? String(json(w).name) : null),
    isClear: (w) => !w.binary && json(w).event === 'clearAudio' && json(w).streamId === 'PS1',
    echo: (name) => JSON.stringify({ event: 'playedStream', streamId: 'PS1', name }),
  },
  vonage: {
    framing: vonageMediaFraming,
    start: JSON.stringify({ event: 'websocket:connected', 'content-type': 'audio/l16;rate=16000', run_id: '1' }),
    // 8 kHz → 16 kHz by sample doubling: close enough for a recording test (the resampler's own tests check quality)
    callerFrame: (pcm) => ({ data: Buffer.from(l16Bytes(Int16Array.from({ length: pcm.length * 2 }, (_, i) => pcm[i >> 1]!))), binary: true }),
    audioOf: (w) => (w.binary ? w.data : null),
    markOf: () => null,
    isClear: (w) => !w.binary && json(w).action === 'clear',
  },
  ari: {
    framing: ariMediaFraming,
    start: 'MEDIA_START connection_id:c1 channel:WebSocket/c1/0x1 format:ulaw optimal_frame_size:160 ptime:20',
    callerFrame: (pcm) => ({ data: Buffer.from(mulawEncode(pcm)), binary: true }),
    audioOf: (w) => (w.binary ? w.data : null),
    markOf: (w) => (!w.binary && w.data.toString().startsWith('MARK_MEDIA ') ? decodeURIComponent(w.data.toString().split('correlation_id:')[1]!) : null),
    isClear: (w) => !w.binary && w.data.toString() === 'FLUSH_MEDIA',
    echo: (name) => `MEDIA_MARK_PROCESSED correlation_id:${encodeURIComponent(name)}`,
  },
  simulator: twilioLike(simulatorMediaFraming, { event: 'start', streamSid: 'SIM1' }),
};

describe('media endpoint: the two-way channel per carrier framing (loopback WebSocket)', () => {
  let server: Server;
  let endpoint: MediaEndpoint;
  let dir: string;
  let port: number;
  const attached = new Map<number, Record<string, unknown>>();
  const channels = new Map<number, WebSocketMediaChannel>();
  const carrierHangUps: Array<[number, string | undefined, string]> = [];
  const unsubscribed: number[] = [];
  let nextRun = 100;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'callplane-media-channel-'));
    const clock = { now: () => new Date() };
    const store = new LocalObjectStore(dir, 'http://x', new HmacUrlSigner('channel-test-secret-0123456789abcdef'), clock);
    const runs = new Map<number, Run>();
    endpoint = new MediaEndpoint({
      framings: new Map(Object.values(CARRIERS).map((c) => [c.framing.provider, c.framing] as const)),
      log: silentLogger,
      options: { maxMessageBytes: 64 * 1024, idleTimeoutMs: 10_000, startTimeoutMs: 5_000 },
      hangUpCall: async (run, callId, reason) => void carrierHangUps.push([run.id, callId, reason]),
      streams: {
        authorize: async (_framing, runId) => {
          const run = { id: runId, organizationId: 9 } as Run;
          runs.set(runId, run);
          return { ok: true, run, authorizedByUrl: true };
        },
        open: (framing, authorization) =>
          new MediaSession(
            {
              store, clock, log: silentLogger, tokens: { verify: () => 'valid' },
              applyStatus: { execute: async () => undefined },
              runs: { attachArtifacts: async (_org, runId, patch) => (attached.set(runId, patch as unknown as Record<string, unknown>), null) },
            },
            authorization.run, framing, { authorizedByUrl: true, maxRecordingBytes: 1_000_000, highWaterBytes: 64 * 1024 },
          ),
      },
    });
    endpoint.onChannel((run, channel) => channels.set(run.id, channel));
    // a broken subscriber is logged and the stream goes on; an unsubscribed one hears nothing
    endpoint.onChannel(() => {
      throw new Error('a broken voice module');
    });
    endpoint.onChannel((run) => void unsubscribed.push(run.id))();
    server = createServer();
    endpoint.attach(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await endpoint.close();
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  async function until<T>(get: () => T | undefined | null | false, what: string, ms = 3000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = get();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  for (const [provider, carrier] of Object.entries(CARRIERS)) {
    it(`${provider}: agent audio, marks, clear and hang-up arrive framed as ${provider} expects; the caller is heard and recorded`, async () => {
      const runId = ++nextRun;
      // Asterisk's websocket_client.conf URL is fixed: the run id comes as a query parameter (dial string v(...))
      const path = provider === 'ari' ? `/api/v1/telephony/ari/media?run_id=${runId}&token=t` : `/api/v1/telephony/${provider}/media/${runId}${carrier.framing.tokenIn === 'query' ? '?token=t' : ''}`;
      const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`);
      const received: Wire[] = [];
      ws.on('message', (data: Buffer, binary: boolean) => received.push({ data: Buffer.from(data), binary }));
      const closed = new Promise<{ code: number; reason: string }>((r) => ws.on('close', (code, reason) => r({ code, reason: reason.toString() })));
      await new Promise<void>((r, j) => {
        ws.once('open', () => r());
        ws.once('error', j);
      });
      ws.send(carrier.start);
      const channel = await until(() => channels.get(runId), 'the channel');
      expect(unsubscribed).toEqual([]);
      const heard: Uint8Array[] = [];
      channel.onAudio((a) => heard.push(a));
      const marks: Array<[string, boolean]> = [];
      channel.onMark((name, played) => marks.push([name, played]));

      // the caller speaks: five 20 ms frames of a 250 Hz tone
      const tone = Int16Array.from({ length: 800 }, (_, i) => Math.round(5000 * Math.sin((2 * Math.PI * 250 * i) / 8000)));
      for (let f = 0; f < 5; f++) {
        const frame = carrier.callerFrame(tone.subarray(f * 160, f * 160 + 160));
        ws.send(frame.data, { binary: frame.binary });
      }
      await until(() => heard.reduce((n, a) => n + a.length, 0) >= 760, 'the caller audio');
      expect(heard.every((a) => a.length === 160)).toBe(true);

      // the agent speaks 40 ms, then a mark
      const agent = mulawEncode(Int16Array.from({ length: 320 }, (_, i) => Math.round(3000 * Math.sin((2 * Math.PI * 440 * i) / 8000))));
      channel.sendAudio(agent);
      channel.sendMark('sentence-1');
      const audioBytes = () => Buffer.concat(received.map(carrier.audioOf).filter((b): b is Buffer => b !== null));
      if (carrier.framing.media.outFormat.encoding === 'mulaw') {
        await until(() => audioBytes().length >= 320, 'the agent audio');
        expect(audioBytes()).toEqual(Buffer.from(agent));
      } else {
        await until(() => audioBytes().length >= 1280, 'the agent audio'); // L16 16 kHz: 4 bytes per μ-law byte
        expect(received.filter((w) => w.binary).map((w) => w.data.length)).toEqual([640, 640]);
      }
      if (carrier.echo) {
        const name = await until(() => received.map(carrier.markOf).find((n) => n !== null), 'the mark on the wire');
        expect(name).toBe('sentence-1');
        expect(marks).toEqual([]);
        ws.send(carrier.echo(name));
      } else {
        expect(received.map(carrier.markOf).filter((n) => n !== null)).toEqual([]); // emulated: nothing on the wire
      }
      await until(() => marks.length === 1, 'the mark played');
      expect(marks).toEqual([['sentence-1', true]]);

      // barge-in: more audio and a mark, then clear
      channel.sendAudio(agent);
      channel.sendMark('sentence-2');
      channel.clear();
      await until(() => received.some(carrier.isClear), 'the clear on the wire');
      expect(marks).toEqual([['sentence-1', true], ['sentence-2', false]]);
      if (carrier.echo) ws.send(carrier.echo('sentence-2')); // a late echo of a cleared mark changes nothing

      // the agent hangs up
      const before = received.length;
      await channel.hangUp('end_call');
      expect(await closed).toEqual({ code: 1000, reason: 'end_call' });
      const after = received.slice(before).map((w) => (w.binary ? '<binary>' : w.data.toString()));
      expect(after).toEqual(provider === 'ari' ? ['HANGUP'] : []);
      // only where the stream is a fork of the call does the hang-up also go through call control
      expect(carrierHangUps.filter(([id]) => id === runId)).toEqual(provider === 'telnyx' ? [[runId, 'v3:cc', 'end_call']] : []);
      expect(marks).toHaveLength(2);

      // the caller's five frames are the recording: μ-law 8 kHz, 800 bytes, whatever the carrier's format
      const patch = await until(() => attached.get(runId), 'the recording attached');
      const stream = (patch.annotations as { media_stream: Record<string, unknown> }).media_stream;
      expect(stream).toMatchObject({ provider, end_reason: 'hangup', recorded_bytes: 800 });
      expect(patch.recordingKey).toBe(`runs/9/${runId}/recording.wav`);
      const recorded = mulawDecode(Buffer.concat(heard));
      expect(recorded.reduce((m, v) => Math.max(m, Math.abs(v)), 0)).toBeGreaterThan(4000);
    });
  }
});
