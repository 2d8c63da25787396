import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ObjectStore } from '../../core/ports/object-store.port.js';
import { startTestService, type TestService } from '../../test/support/test-service.js';

describe('signed downloads with byte ranges (GET /api/v1/files/<key>)', () => {
  let svc: TestService;
  let dataDir: string;
  let path: string;
  // 100,000 bytes of a recording: more than one 64 KiB read
  const audio = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 13 + 5) % 256));

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'callplane-files-'));
    svc = await startTestService({ env: { CALLPLANE_DATA_DIR: dataDir } });
    const store = svc.container.get<ObjectStore>(ObjectStore);
    await store.put('runs/1/7/recording.wav', audio, { contentType: 'audio/wav' });
    const u = new URL(await store.signedDownloadUrl('runs/1/7/recording.wav', { expiresInSeconds: 3600 }));
    path = u.pathname + u.search;
  });
  afterAll(async () => {
    await svc.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const download = async (p: string, headers: Record<string, string> = {}) => {
    const r = await fetch(svc.url + p, { headers });
    return { status: r.status, headers: r.headers, body: Buffer.from(await r.arrayBuffer()) };
  };

  it('answers the whole file 200 and says it accepts byte ranges', async () => {
    const r = await download(path);
    expect(r.status).toBe(200);
    expect(r.headers.get('accept-ranges')).toBe('bytes');
    expect(r.headers.get('content-length')).toBe('100000');
    expect(r.headers.get('content-range')).toBeNull();
    expect(r.headers.get('content-type')).toBe('audio/wav');
    expect(r.body).toEqual(audio);
  });

  it.each([
    ['bytes=0-99', 0, 99],
    ['bytes=65530-65545', 65530, 65545],
    ['bytes=99990-', 99990, 99999],
    ['bytes=99000-200000', 99000, 99999],
    ['bytes=-10', 99990, 99999],
    ['bytes=-500000', 0, 99999],
  ])('answers %s with 206 and bytes %i-%i', async (range, start, end) => {
    const r = await download(path, { range });
    expect(r.status).toBe(206);
    expect(r.headers.get('content-range')).toBe(`bytes ${start}-${end}/100000`);
    expect(r.headers.get('content-length')).toBe(String(end - start + 1));
    expect(r.headers.get('accept-ranges')).toBe('bytes');
    expect(r.headers.get('content-type')).toBe('audio/wav');
    expect(r.body).toEqual(audio.subarray(start, end + 1));
  });

  it.each(['bytes=100000-', 'bytes=100000-100010', 'bytes=-0'])('answers the unsatisfiable %s with 416 and the size', async (range) => {
    const r = await download(path, { range });
    expect(r.status).toBe(416);
    expect(r.headers.get('content-range')).toBe('bytes */100000');
    expect(JSON.parse(r.body.toString())).toEqual({ detail: expect.any(String), code: 'range_not_satisfiable' });
  });

  it.each(['bytes=0-1,5-6', 'bytes=9-3', 'pages=1-2', 'bytes=x-'])('answers %s (several or malformed ranges) with the whole 200', async (range) => {
    const r = await download(path, { range });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-length')).toBe('100000');
    expect(r.body).toEqual(audio);
  });

  it('answers the whole 200 when If-Range is sent (no validator of ours can match it)', async () => {
    const r = await download(path, { range: 'bytes=0-9', 'if-range': '"abc"' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual(audio);
  });

  it('serves a player seeking: a probe of the start, a jump near the end, a jump back, then reading on', async () => {
    const got: Buffer[] = [];
    for (const [range, start, end] of [
      ['bytes=0-', 0, 99999],
      ['bytes=90000-', 90000, 99999],
      ['bytes=20000-29999', 20000, 29999],
      ['bytes=30000-', 30000, 99999],
    ] as const) {
      const r = await download(path, { range });
      expect([range, r.status, r.headers.get('content-range')]).toEqual([range, 206, `bytes ${start}-${end}/100000`]);
      got.push(r.body);
    }
    expect(got[0]).toEqual(audio);
    expect(got[1]).toEqual(audio.subarray(90000));
    expect(Buffer.concat([got[2], got[3]])).toEqual(audio.subarray(20000));
  });

  it('checks the signature before the range: tampered, expired or missing is 403 whatever the Range says', async () => {
    const u = new URL(svc.url + path);
    const sig = u.searchParams.get('signature')!;
    const expires = Number(u.searchParams.get('expires'));
    const flipped = sig.slice(0, -1) + (sig.endsWith('0') ? '1' : '0');
    for (const p of [
      `${u.pathname}?expires=${expires}&signature=${flipped}`,
      `${u.pathname}?expires=${expires + 1}&signature=${sig}`,
      `${u.pathname.replace('recording.wav', 'other.wav')}?expires=${expires}&signature=${sig}`,
      u.pathname,
    ]) {
      for (const range of ['bytes=0-9', 'bytes=100000-', 'bytes=-0']) {
        const r = await download(p, { range });
        expect([p, range, r.status, JSON.parse(r.body.toString()).code, r.headers.get('content-range')]).toEqual([p, range, 403, 'signature_invalid', null]);
      }
    }
  });

  it('answers a valid link to a deleted file 404, ranged or not', async () => {
    const store = svc.container.get<ObjectStore>(ObjectStore);
    await store.put('runs/1/8/recording.wav', audio.subarray(0, 10), { contentType: 'audio/wav' });
    const u = new URL(await store.signedDownloadUrl('runs/1/8/recording.wav', { expiresInSeconds: 3600 }));
    await store.delete('runs/1/8/recording.wav');
    for (const range of [undefined, 'bytes=0-3', 'bytes=50-']) {
      const r = await download(u.pathname + u.search, range ? { range } : {});
      expect([range, r.status, JSON.parse(r.body.toString()).code]).toEqual([range, 404, 'file_not_found']);
    }
  });
});
