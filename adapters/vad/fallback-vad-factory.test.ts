import { describe, expect, it } from '@jest/globals';
import type { Logger } from '../../core/ports/logger.port.js';
import { silentLogger } from '../../core/ports/logger.port.js';
import { FallbackVadFactory } from './fallback-vad-factory.js';

function recordingLogger(lines: Array<{ level: string; msg: string }>): Logger {
  const log = (level: string) => (_o: unknown, msg?: string) => lines.push({ level, msg: msg ?? '' });
  const logger = { ...silentLogger, info: log('info'), warn: log('warn'), error: log('error'), child: () => logger } as unknown as Logger;
  return logger;
}

describe('FallbackVadFactory', () => {
  it('uses the primary detector when its model loads at warm-up', () => {
    const created: string[] = [];
    const primary = { warmUp: () => undefined, create: () => { created.push('silero'); return {} as never; } };
    const f = new FallbackVadFactory(primary, silentLogger);
    f.warmUp();
    expect(f.kind).toBe('silero');
    f.create({ sampleRate: 8000 });
    expect(created).toEqual(['silero']);
  });

  it('falls back to the energy detector with one warning when the model cannot load, and never throws', () => {
    const lines: Array<{ level: string; msg: string }> = [];
    const primary = { warmUp: () => { throw new Error('onnxruntime missing'); }, create: () => { throw new Error('unreachable'); } };
    const f = new FallbackVadFactory(primary, recordingLogger(lines));
    const vad = f.create({ sampleRate: 8000 });
    f.create({ sampleRate: 8000 });
    expect(f.kind).toBe('energy');
    expect(vad.push(new Int16Array(256))).toEqual([]);
    expect(lines.filter((l) => l.level === 'warn')).toEqual([{ level: 'warn', msg: expect.stringContaining('energy detector') }]);
  });

  it('close() releases what the primary detector holds (Silero\'s inference thread), whichever detector calls got', async () => {
    let closed = 0;
    const primary = { warmUp: () => undefined, create: () => ({}) as never, close: async () => void closed++ };
    await new FallbackVadFactory(primary, silentLogger).close();
    expect(closed).toBe(1);
    const lines: Array<{ level: string; msg: string }> = [];
    const failing = { ...primary, close: async () => { throw new Error('terminate failed'); } };
    await expect(new FallbackVadFactory(failing, recordingLogger(lines)).close()).resolves.toBeUndefined();
    expect(lines.map((l) => l.level)).toEqual(['warn']);
  });
});
