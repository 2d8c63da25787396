import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureSecretKey, loadSettings, SettingsError } from './settings.js';

describe('settings', () => {
  it('has the documented defaults', () => {
    const s = loadSettings({});
    expect(s).toMatchObject({ port: 8000, host: '127.0.0.1', signup: 'first-user', storage: 'sqlite', logLevel: 'info', role: 'all', tokenTtlHours: 168, secretKey: null, mongodbUri: null });
    expect(s.dataDir.endsWith('/data')).toBe(true);
    expect(s.publicUrl).toBe('http://127.0.0.1:8000');
    expect(s.voice).toEqual({ vad: 'silero', vadInference: 'thread' });
    expect(loadSettings({ CALLPLANE_VOICE_VAD_INFERENCE: 'inline' }).voice?.vadInference).toBe('inline');
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['CALLPLANE_SIGNUP', 'sometimes'],
    ['LOG_LEVEL', 'loud'],
    ['CALLPLANE_PUBLIC_URL', 'ftp://example.com'],
    ['CALLPLANE_PUBLIC_URL', 'not a url'],
    ['CALLPLANE_SECRET_KEY', 'short'],
    ['MONGODB_URI', 'postgres://x'],
    ['CALLPLANE_STORAGE', 'redis'],
    ['CALLPLANE_ROLE', 'boss'],
    ['HOST', 'bad host!'],
    ['CALLPLANE_VOICE_VAD_INFERENCE', 'gpu'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    let err: unknown;
    try {
      loadSettings({ [name]: value });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SettingsError);
    expect((err as SettingsError).variable).toBe(name);
    expect((err as Error).message).toContain(name);
    expect((err as Error).message).not.toContain('\n');
  });

  it('requires MONGODB_URI for mongodb storage', () => {
    expect(() => loadSettings({ CALLPLANE_STORAGE: 'mongodb' })).toThrow(/MONGODB_URI/);
    expect(loadSettings({ CALLPLANE_STORAGE: 'mongodb', MONGODB_URI: 'mongodb://db:27017/callplane' }).storage).toBe('mongodb');
  });

  it('strips a trailing slash from the public URL', () => {
    expect(loadSettings({ CALLPLANE_PUBLIC_URL: 'https://calls.example.com/' }).publicUrl).toBe('https://calls.example.com');
  });

  it('generates a secret key once, mode 600, and reuses it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'callplane-settings-'));
    const s = loadSettings({ CALLPLANE_DATA_DIR: dir });
    const first = ensureSecretKey(s);
    expect(first.length).toBeGreaterThanOrEqual(32);
    const file = join(dir, 'secret.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toBe(first);
    expect(ensureSecretKey(s)).toBe(first);
    expect(ensureSecretKey(loadSettings({ CALLPLANE_DATA_DIR: dir, CALLPLANE_SECRET_KEY: 'x'.repeat(40) }))).toBe('x'.repeat(40));
  });
});
