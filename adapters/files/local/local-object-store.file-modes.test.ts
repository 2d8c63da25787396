import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
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
