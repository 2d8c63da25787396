import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FallbackVadFactory } from '../../adapters/vad/fallback-vad-factory.js';
import type { SileroVoiceActivityDetectorFactory } from '../../adapters/vad/silero-vad.js';
import { silentLogger } from '../../core/ports/logger.port.js';
import { VoiceActivityDetectorFactory } from '../../core/ports/voice-activity-detector.port.js';
import { buildContainer } from '../composition-root.js';
import type { Lifecycle } from '../lifecycle.js';
import { ensureSecretKey, loadSettings } from '../settings.js';
import { LifecycleToken } from '../tokens.js';

/** A worker-role service's container on a fresh data directory, started; its Silero factory and how to stop it. */
async function started(env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'callplane-voice-module-'));
  const settings = loadSettings({ CALLPLANE_DATA_DIR: dir, CALLPLANE_ROLE: 'worker', ...env });
  const c = buildContainer({ settings, secretKey: ensureSecretKey(settings), logger: silentLogger });
  const lifecycle = c.get<Lifecycle>(LifecycleToken);
  await lifecycle.start();
  const vad = c.get<VoiceActivityDetectorFactory>(VoiceActivityDetectorFactory);
  expect(vad).toBeInstanceOf(FallbackVadFactory);
  expect((vad as FallbackVadFactory).kind).toBe('silero');
  const silero = (vad as unknown as { primary: SileroVoiceActivityDetectorFactory }).primary;
  return {
    silero,
    stop: async () => {
      expect(await lifecycle.stop()).toEqual([]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('the voice module\'s Silero inference', () => {
  it('runs on a thread of its own by default, started at warm-up and stopped with the service', async () => {
    const s = await started();
    const thread = s.silero.inferenceThread;
    expect(thread).not.toBeNull();
    expect(await thread!.ready).toBe(true);
    expect(thread!.available).toBe(true);
    await s.stop();
    expect(thread!.available).toBe(false);
  });

  it('runs inline with CALLPLANE_VOICE_VAD_INFERENCE=inline', async () => {
    const s = await started({ CALLPLANE_VOICE_VAD_INFERENCE: 'inline' });
    expect(s.silero.inferenceThread).toBeNull();
    await s.stop();
  });
});
