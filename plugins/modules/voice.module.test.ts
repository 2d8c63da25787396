import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FallbackVadFactory } from '../../adapters/vad/fallback-vad-factory.js';
import type { SileroVoiceActivityDetectorFactory } from '../../adapters/vad/silero-vad.js';
import { silentLogger, type LogFields, type Logger } from '../../core/ports/logger.port.js';
import { VoiceActivityDetectorFactory } from '../../core/ports/voice-activity-detector.port.js';
import { buildContainer } from '../composition-root.js';
import type { Lifecycle } from '../lifecycle.js';
import { ensureSecretKey, loadSettings } from '../settings.js';
import { LifecycleToken } from '../tokens.js';
import { readAudioFixture } from '../../test/fixtures/audio/fixtures.js';

/** A worker-role service's container on a fresh data directory, started; its Silero factory and how to stop it. */
async function started(env: Record<string, string> = {}, logger: Logger = silentLogger) {
  const dir = mkdtempSync(join(tmpdir(), 'callplane-voice-module-'));
  const settings = loadSettings({ CALLPLANE_DATA_DIR: dir, CALLPLANE_ROLE: 'worker', ...env });
  const c = buildContainer({ settings, secretKey: ensureSecretKey(settings), logger });
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

  it('logs a death of the thread and its restart, and a listener that throws (its call\'s detector is reset)', async () => {
    const lines: Array<{ level: string; msg: string; fields: LogFields }> = [];
    const recording = (bound: LogFields): Logger => ({
      debug: () => undefined,
      info: (fields, msg) => void lines.push({ level: 'info', msg, fields: { ...bound, ...fields } }),
      warn: (fields, msg) => void lines.push({ level: 'warn', msg, fields: { ...bound, ...fields } }),
      error: (fields, msg) => void lines.push({ level: 'error', msg, fields: { ...bound, ...fields } }),
      child: (fields) => recording({ ...bound, ...fields }),
    });
    const s = await started({}, recording({}));
    const thread = s.silero.inferenceThread!;
    expect(await thread.ready).toBe(true);
    const threadLines = () => lines.filter((l) => /Silero inference thread/.test(l.msg));
    // idle (no batch away): killing it now is not inside a native call
    await (thread as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    const deadline = Date.now() + 5000;
    while (!thread.available && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20)); // back after 1 s
    expect(thread.available).toBe(true);
    // a call whose listener throws on its first event
    const d = s.silero.create({ sampleRate: 8000, onEvent: () => {
      throw new Error('listener bug');
    } });
    const speech = readAudioFixture('yes-i-will-attend').samples;
    for (let i = 0; i < speech.length; i += 160) d.push(speech.subarray(i, i + 160));
    await s.silero.settled();
    const errors = lines.filter((l) => l.level === 'error');
    await s.stop();
    expect(threadLines().map((l) => [l.level, l.msg, String(l.fields.err ?? l.fields.detail)])).toEqual([
      ['warn', 'the Silero inference thread failed: calls are scored on the event loop', expect.stringMatching(/exited with code 1; .* starts again in 1000 ms$/)],
      ['info', 'the Silero inference thread is back: calls are scored there again', expect.stringMatching(/running again/)],
    ]);
    expect(errors.map((l) => [l.msg, l.fields.vad, l.fields.err])).toEqual([['a voice activity listener threw: its call\'s detector was reset', 'silero', 'listener bug']]);
  });

  it('runs inline with CALLPLANE_VOICE_VAD_INFERENCE=inline', async () => {
    const s = await started({ CALLPLANE_VOICE_VAD_INFERENCE: 'inline' });
    expect(s.silero.inferenceThread).toBeNull();
    await s.stop();
  });
});
