import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestService, type Credentials, type TestService } from '../../test/support/test-service.js';
import { createSimulatorConfig, createWorkflow, uploadCsv } from '../../test/e2e/campaign-support.js';

const run = promisify(execFile);

/** Bad lists and big lists through the real routes: presign, PUT, POST /campaign/create (issue 10). */
describe('contact list ingest', () => {
  let svc: TestService;
  let auth: Credentials;
  let workflowId: number;
  const dir = mkdtempSync(join(tmpdir(), 'callplane-ingest-'));

  beforeAll(async () => {
    svc = await startTestService({ env: { CALLPLANE_DATA_DIR: dir } });
    auth = { token: (await svc.signup()).token };
    workflowId = await createWorkflow(svc, auth);
    await createSimulatorConfig(svc, auth, { ringMs: 0, talkMs: 0, isDefault: true });
  });
  afterAll(async () => {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const create = (sourceId: string) =>
    svc.post('/campaign/create', { name: 'Ingest', workflow_id: workflowId, source_type: 'csv', source_id: sourceId }, auth);

  const presign = async (size: number) => {
    const p = await svc.post('/s3/presigned-upload-url', { file_name: 'contacts.csv', file_size: size }, auth);
    expect(p.status).toBe(200);
    return { url: (p.body.upload_url as string).replace(/^https?:\/\/[^/]+/, svc.url), key: p.body.file_key as string };
  };

  it('answers 400 invalid_source, not 500, for a list with data rows but no phone_number column', async () => {
    const csv = `name,email\n${Array.from({ length: 5000 }, (_, i) => `Person ${i},p${i}@example.com`).join('\n')}\n`;
    const r = await create(await uploadCsv(svc, auth, csv));
    expect([r.status, r.body.code]).toEqual([400, 'invalid_source']);
    expect(r.body.detail).toBe('the header row (row 1) has no phone_number column; found "name", "email"');
  });

  it('stores the bytes of a PUT sent with curl\'s default content type (application/x-www-form-urlencoded)', async () => {
    const csv = 'phone_number,first_name\n+14155550100,Ada\n+14155550101,Grace&Co=1\n';
    const file = join(dir, 'form.csv');
    writeFileSync(file, csv);
    const { url, key } = await presign(Buffer.byteLength(csv));
    // curl -X PUT --data-binary sends Content-Type: application/x-www-form-urlencoded unless told otherwise
    const { stdout } = await run('curl', ['-sS', '-X', 'PUT', '--data-binary', `@${file}`, '-w', '\n%{http_code}', url]);
    const [body, status] = stdout.split('\n');
    expect(status).toBe('200');
    expect(JSON.parse(body)).toEqual({ file_key: key, size: Buffer.byteLength(csv) });
    const r = await create(key);
    expect(r.status).toBe(200);
    expect(r.body.total_rows).toBe(2);
  });

  it('stores a PUT labelled application/json as bytes too, and refuses an empty one instead of answering 200', async () => {
    const csv = 'phone_number\n+14155550102\n';
    const a = await presign(Buffer.byteLength(csv));
    const json = await fetch(a.url, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: csv });
    expect(json.status).toBe(200);
    expect(((await json.json()) as { size: number }).size).toBe(Buffer.byteLength(csv));

    const b = await presign(10);
    const empty = await fetch(b.url, { method: 'PUT', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { code: string }).code).toBe('upload_incomplete');
    const r = await create(b.key);
    expect([r.status, r.body.code]).toEqual([400, 'invalid_source']);
  });

  it('keeps the event loop responsive while a 100,000-row list is parsed and stored', async () => {
    const rows = 100_000;
    const lines = ['phone_number,first_name,last_name,company,notes'];
    for (let i = 0; i < rows; i++) {
      lines.push(`+1${String(2_000_000_000 + i)},First${i},Last${i},"Company ${i % 977}, Inc.",Call after 5pm; prefers email ${i}`);
    }
    const key = await uploadCsv(svc, auth, `${lines.join('\n')}\n`, 'big.csv');
    const delay = monitorEventLoopDelay({ resolution: 5 });
    // a probe request while the list is stored: it must not wait for the whole ingest
    let healthMs = Number.NaN;
    delay.enable();
    const started = performance.now();
    let createMs = Number.NaN;
    const creating = create(key).then((res) => {
      createMs = performance.now() - started;
      return res;
    });
    const probe = (async () => {
      await new Promise((r) => setTimeout(r, 100));
      const t = performance.now();
      const h = await svc.get('/health');
      healthMs = performance.now() - t;
      expect(h.status).toBe(200);
    })();
    const [r] = await Promise.all([creating, probe]);
    delay.disable();
    expect(r.status).toBe(200);
    expect(r.body.total_rows).toBe(rows);
    const maxMs = delay.max / 1e6;
    // Speed targets live in bench/csv-ingest.mjs (loop_max_ms and health_max_ms against a 50 ms target). This only
    // catches a loop held for the whole store, so it is relative to how long the create took, which a loaded machine
    // stretches as much as the stalls: with the list stored in one transaction the longest stall here was 760 ms of a
    // 4.5 s create (1/6); chunked, 120 ms of 7.7 s alone and 459 ms at load 15 on 2 cores (about 1/60).
    expect(maxMs).toBeLessThan(createMs / 10);
    expect(healthMs).toBeLessThan(createMs / 10);
  }, 60_000);
});
