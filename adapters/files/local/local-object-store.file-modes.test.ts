import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalObjectStore } from './local-object-store.js';

const mode = (p: string) => statSync(p).mode & 0o777;
const signer = { sign: () => 'sig', verify: () => true };
const clock = { now: () => new Date('2026-01-01T00:00:00Z') };

describe('local object store file modes (docs/security.md, "File modes")', () => {
  let root: string;
  let umask: number;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'callplane-objects-'));
    umask = process.umask(0o022);
  });
  afterEach(() => {
    process.umask(umask);
    rmSync(root, { recursive: true, force: true });
  });

  it('stores objects 0600 under directories created 0700', async () => {
    const store = new LocalObjectStore(join(root, 'files'), 'http://localhost', signer, clock);
    await store.put('uploads/1/list.csv', 'phone_number\n+15550000001\n', { contentType: 'text/csv' });
    const file = join(root, 'files', 'objects', 'uploads', '1', 'list.csv');
    expect(mode(join(root, 'files'))).toBe(0o700);
    expect(mode(join(root, 'files', 'objects'))).toBe(0o700);
    expect(mode(join(root, 'files', 'objects', 'uploads', '1'))).toBe(0o700);
    expect(mode(file)).toBe(0o600);
    expect(mode(`${file}.meta.json`)).toBe(0o600);
  });
});

describe('local object store sweep of incomplete writes (core/ports/object-store.port.ts sweepIncomplete)', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'callplane-objects-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('removes a meta file whose object is missing, and keeps objects that only look like leftovers', async () => {
    const store = new LocalObjectStore(join(root, 'files'), 'http://localhost', signer, clock);
    await store.put('r/a.0123456789ab.tmp', 'an object named like a temporary file');
    await store.put('r/b.meta.json', '{"an":"object"}');
    await store.put('r/c.bin', 'c');
    rmSync(join(root, 'files', 'objects', 'r', 'c.bin')); // a crash between the meta and the rename
    const future = new Date(Date.now() + 60_000);
    expect(await store.sweepIncomplete(future)).toBe(1);
    expect(existsSync(join(root, 'files', 'objects', 'r', 'c.bin.meta.json'))).toBe(false);
    expect((await store.stat('r/a.0123456789ab.tmp'))?.size).toBe(37);
    expect((await store.stat('r/b.meta.json'))?.size).toBe(15);
  });

  it('finds leftovers in wide and deep directories: the walk reads every batch of every directory', async () => {
    const store = new LocalObjectStore(join(root, 'files'), 'http://localhost', signer, clock);
    // 150 runs of one organization (wider than a directory handle's batch of 32), one deeper still
    for (let i = 0; i < 150; i++) {
      await store.put(`org/runs/${i}/call.wav`, 'kept');
      await store.put(`org/runs/${i}/call.wav.part`, 'left by a crash');
    }
    await store.put('org/runs/deep/a/b/c/d/e/call.wav.part', 'left by a crash');
    const future = new Date(Date.now() + 60_000);
    expect(await store.sweepIncomplete(future)).toBe(151);
    expect(await store.sweepIncomplete(future)).toBe(0);
    expect(existsSync(join(root, 'files', 'objects', 'org', 'runs', '149', 'call.wav.part'))).toBe(false);
    expect((await store.stat('org/runs/149/call.wav'))?.size).toBe(4);
  });
});
