import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HmacUrlSigner } from '../../adapters/crypto/node-crypto.js';
import { LocalObjectStore } from '../../adapters/files/local/local-object-store.js';
import { silentLogger } from '../ports/logger.port.js';
import { MediaSession, MULAW_8K_MONO } from './media-session.js';
import { MediaTokens } from './media-token.js';

const clock = { now: () => new Date('2025-01-01T00:00:00Z') };
const signer = new HmacUrlSigner('unit-test-secret-key-0123456789abcdef');

describe('MediaSession.handOverRecording (a talking call records itself in stereo)', () => {
  let dir: string;
  let store: LocalObjectStore;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'callplane-handover-'));
    store = new LocalObjectStore(dir, 'http://x', signer, clock);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function stream(handOver: boolean) {
    const attached: Array<Record<string, unknown>> = [];
    const session = new MediaSession(
      { store, clock, log: silentLogger, tokens: new MediaTokens(signer, clock, 60), applyStatus: { execute: async () => undefined },
        runs: { attachArtifacts: async (_o: number, _r: number, patch: Record<string, unknown>) => (attached.push(patch), null) } },
      { id: handOver ? 51 : 52, organizationId: 5 },
      { provider: 'twilio', startMeansInProgress: false, stopMeansCompleted: false },
      { authorizedByUrl: true, maxRecordingBytes: 1_000_000, highWaterBytes: 64 * 1024 },
    );
    session.onStart({ tracks: ['inbound'], format: MULAW_8K_MONO, parameters: {} });
    session.onAudio('inbound', new Uint8Array(160).fill(0x10));
    if (handOver) session.handOverRecording();
    session.onAudio('inbound', new Uint8Array(160).fill(0x20));
    const summary = await session.onStop('stop');
    return { attached, summary };
  }

  it('attaches no caller-only recording_url and stops storing caller audio; the stream summary is still attached', async () => {
    const { attached } = await stream(true);
    expect(attached).toHaveLength(1);
    expect(attached[0]).not.toHaveProperty('recordingKey');
    expect(attached[0]).toMatchObject({ annotations: { media_stream: { inbound_bytes: 320, not_recorded_reason: 'recorded by the voice session' } }, logs: [{ message: 'recorded by the voice session' }] });
    // the frame it took before the hand-over leaves nothing behind: no caller-only WAV, no raw object
    expect(await store.stat('runs/5/51/recording.wav')).toBeNull();
    expect(await store.stat('runs/5/51/recording.ulaw.part')).toBeNull();
    expect(await store.sweepIncomplete(new Date(Date.now() + 60_000))).toBe(0);
  });

  it('without a hand-over the caller-only recording is attached as before', async () => {
    const { attached } = await stream(false);
    expect(attached[0]).toMatchObject({ recordingKey: 'runs/5/52/recording.wav' });
  });
});
