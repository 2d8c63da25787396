import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, beforeAll, afterAll } from '@jest/globals';
import { CampaignEngine } from '../../core/campaigns/campaign-engine.js';
import type { Clock } from '../../core/ports/clock.port.js';
import { startTestService, type Credentials, type TestService } from '../../test/support/test-service.js';
import { createSimulatorConfig, createWorkflow, csvOf, uploadCsv, waitFor } from '../../test/e2e/campaign-support.js';

/** Real time plus an offset the test can move (retry delays). */
class OffsetClock implements Clock {
  offset = 0;
  now() {
    return new Date(Date.now() + this.offset);
  }
}

describe('uploads and campaigns API', () => {
  let svc: TestService;
  let sheets: Server;
  let sheetsUrl: string;
  const clock = new OffsetClock();
  let auth: Credentials;
  let otherAuth: Credentials;
  let org: number;
  let workflowId: number;
  let configId: number;

  beforeAll(async () => {
    sheets = createServer((req, res) => {
      if (req.url?.startsWith('/spreadsheets/d/SHEET_ID_0123456789/export?format=csv&gid=7')) {
        res.setHeader('content-type', 'text/csv');
        res.end('Phone_Number , Name\n+1 (555) 010-2030,Ann\n+15550102031,Bob\n+15550102030,Ann again\n');
      } else {
        res.statusCode = 404;
        res.end('nope');
      }
    });
    await new Promise<void>((r) => sheets.listen(0, '127.0.0.1', () => r()));
    sheetsUrl = `http://127.0.0.1:${(sheets.address() as AddressInfo).port}`;
    svc = await startTestService({ clock, env: { CALLPLANE_GOOGLE_SHEETS_URL: sheetsUrl, CALLPLANE_DATA_DIR: `/tmp/callplane-campaign-api-${process.pid}` } });
    const a = await svc.signup();
    auth = { token: a.token };
    org = a.organizationId;
    otherAuth = { token: (await svc.signup()).token };
    workflowId = await createWorkflow(svc, auth);
    configId = await createSimulatorConfig(svc, auth, { ringMs: 0, talkMs: 0 });
  });
  afterAll(async () => {
    await svc.close();
    await new Promise<void>((r) => sheets.close(() => r()));
  });

  const create = (body: Record<string, unknown>, who = auth) => svc.post('/campaign/create', { name: 'Promo', workflow_id: workflowId, source_type: 'csv', ...body }, who);

  describe('uploads', () => {
    it('validates the presign request', async () => {
      const r = await svc.post('/s3/presigned-upload-url', { file_name: 'list.txt', file_size: 0 }, auth);
      expect(r.status).toBe(422);
      expect(r.body.detail.map((d: { loc: string[] }) => d.loc.join('.')).sort()).toEqual(['body.file_name', 'body.file_size']);
      expect((await svc.post('/s3/presigned-upload-url', { file_name: 'a.csv', file_size: 10485761 }, auth)).status).toBe(422);
      expect((await svc.post('/s3/presigned-upload-url', { file_name: 'a.csv', file_size: 10 })).status).toBe(401);
    });

    it('issues a key of the organization and a signed URL accepting exactly the declared size', async () => {
      const csv = 'phone_number\n+15550001111\n';
      const p = await svc.post('/s3/presigned-upload-url', { file_name: 'My List (v2).CSV', file_size: Buffer.byteLength(csv) }, auth);
      expect(p.status).toBe(200);
      expect(p.body.expires_in).toBe(3600);
      expect(p.body.file_key).toMatch(new RegExp(`^uploads/${org}/[0-9a-f-]{36}/My_List_v2_.csv$`));
      const url = p.body.upload_url.replace(/^https?:\/\/[^/]+/, svc.url);
      const tampered = await fetch(url.replace(/signature=([0-9a-f])/, (_m: string, c: string) => `signature=${c === 'a' ? 'b' : 'a'}`), { method: 'PUT', body: csv });
      expect(tampered.status).toBe(403);
      expect(((await tampered.json()) as { code: string }).code).toBe('signature_invalid');
      const bigger = await fetch(url, { method: 'PUT', body: csv + 'x' });
      expect(bigger.status).toBe(413);
      expect(((await bigger.json()) as { code: string }).code).toBe('payload_too_large');
      // streamed without a length: refused while streaming, nothing stored
      const stream = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(csv)); c.enqueue(new TextEncoder().encode('more')); c.close(); } });
      const chunked = await fetch(url, { method: 'PUT', body: stream, duplex: 'half' } as RequestInit);
      expect(chunked.status).toBe(413);
      const early = await create({ source_id: p.body.file_key });
      expect(early.status).toBe(400);
      expect(early.body.code).toBe('invalid_source');
      const ok = await fetch(url, { method: 'PUT', headers: { 'content-type': 'text/csv' }, body: csv });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ file_key: p.body.file_key, size: Buffer.byteLength(csv) });
      clock.offset = 3601_000;
      try {
        expect((await fetch(url, { method: 'PUT', body: csv })).status).toBe(403);
      } finally {
        clock.offset = 0;
      }
    });
  });

  describe('create', () => {
    it('parses the CSV, skips duplicates, applies defaults and presents the campaign', async () => {
      const key = await uploadCsv(svc, auth, 'phone_number,first_name\n+15550001001,A\n+1 555 000 1002,B\n+15550001001,C\n');
      const r = await create({ source_id: key });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        name: 'Promo', workflow_id: workflowId, workflow_name: 'Agent', state: 'draft', source_type: 'csv', source_id: key, total_rows: 2,
        processed_rows: 0, failed_rows: 0, executed_count: 0, total_queued_count: 2, started_at: null, completed_at: null, max_concurrency: 5,
        retry_config: { enabled: true, max_retries: 2, retry_delay_seconds: 300, retry_on_busy: true, retry_on_no_answer: true, retry_on_voicemail: false },
        circuit_breaker: { enabled: false, failure_threshold: 0.5, window_seconds: 120, min_calls_in_window: 5 }, schedule_config: null,
        telephony_configuration_id: configId, telephony_configuration_name: 'Sim', parent_campaign_id: null, redialed_campaign_id: null,
      });
      expect(r.body.created_at).toMatch(/Z$/);
      expect(r.body.logs.map((l: { event: string }) => l.event)).toEqual(['campaign_created', 'duplicates_skipped']);
      expect(r.body.logs[1].details).toEqual({ count: 1, rows: [4] });
    });

    it('reads source_url and time_slots aliases; both schedule forms are 422', async () => {
      const key = await uploadCsv(svc, auth, 'phone_number\n+15550002001\n');
      const r = await create({ source_url: key, time_slots: [{ day: 'monday', start: '9:00', end: '17:00' }], timezone: 'Europe/Paris', retry_config: { max_retries: 5 } });
      expect(r.status).toBe(200);
      expect(r.body.source_id).toBe(key);
      expect(r.body.schedule_config).toEqual({ enabled: true, timezone: 'Europe/Paris', slots: [{ day_of_week: 0, start_time: '09:00', end_time: '17:00' }] });
      expect(r.body.retry_config.max_retries).toBe(5);
      const both = await create({ source_id: key, time_slots: [{ day: 'monday', start: '09:00', end: '17:00' }], schedule_config: { slots: [{ day_of_week: 0, start_time: '09:00', end_time: '10:00' }] } });
      expect(both.status).toBe(422);
      expect(both.body.detail[0].loc).toEqual(['body', 'time_slots']);
      const badZone = await create({ source_id: key, schedule_config: { timezone: 'Mars/Base', slots: [{ day_of_week: 0, start_time: '09:00', end_time: '10:00' }] } });
      expect(badZone.status).toBe(422);
      expect(badZone.body.detail[0].loc).toEqual(['body', 'schedule_config', 'timezone']);
      expect((await create({})).body.detail[0].loc).toEqual(['body', 'source_id']);
    });

    it('enforces bounds with 422', async () => {
      const key = await uploadCsv(svc, auth, 'phone_number\n+15550003001\n');
      for (const body of [
        { max_concurrency: 0 }, { max_concurrency: 101 }, { retry_config: { max_retries: 11 } }, { retry_config: { retry_delay_seconds: 29 } },
        { circuit_breaker: { failure_threshold: 0 } }, { circuit_breaker: { failure_threshold: 1.5 } }, { circuit_breaker: { window_seconds: 5 } },
        { circuit_breaker: { min_calls_in_window: 1001 } }, { name: '' }, { source_type: 'xls' },
      ]) {
        const r = await create({ source_id: key, ...body });
        expect([r.status, JSON.stringify(body)]).toEqual([422, JSON.stringify(body)]);
      }
    });

    it('refuses unknown or archived workflows, unknown configurations, foreign files and bad CSVs', async () => {
      const key = await uploadCsv(svc, auth, 'phone_number\n+15550004001\n');
      expect((await create({ source_id: key, workflow_id: 99999 })).body).toMatchObject({ code: 'workflow_not_found' });
      const archived = await createWorkflow(svc, auth, 'Old');
      await svc.put(`/workflow/${archived}/status`, { status: 'archived' }, auth);
      const a = await create({ source_id: key, workflow_id: archived });
      expect([a.status, a.body.code]).toEqual([400, 'workflow_archived']);
      const c = await create({ source_id: key, telephony_configuration_id: 99999 });
      expect(c.status).toBe(400);
      expect(c.body).toEqual({ detail: 'telephony_configuration_not_found', code: 'telephony_configuration_not_found' });
      // the other organization cannot use this file, nor does it have a default configuration
      const otherWf = await createWorkflow(svc, otherAuth);
      const noDefault = await svc.post('/campaign/create', { name: 'x', workflow_id: otherWf, source_type: 'csv', source_id: key }, otherAuth);
      expect(noDefault.body.code).toBe('no_default_telephony_configuration');
      await createSimulatorConfig(svc, otherAuth);
      const foreign = await svc.post('/campaign/create', { name: 'x', workflow_id: otherWf, source_type: 'csv', source_id: key }, otherAuth);
      expect([foreign.status, foreign.body.code]).toEqual([400, 'invalid_source']);
      const bad = await uploadCsv(svc, auth, 'phone_number\n12\nabc\n');
      const b = await create({ source_id: bad });
      expect([b.status, b.body.code]).toEqual([400, 'invalid_source']);
      expect(b.body.detail).toMatch(/rows 2, 3/);
    });

    it('reads a Google Sheet through its CSV export', async () => {
      const r = await create({ source_type: 'google-sheet', source_id: 'https://docs.google.com/spreadsheets/d/SHEET_ID_0123456789/edit#gid=7' });
      expect(r.status).toBe(200);
      expect(r.body.total_rows).toBe(2);
      const missing = await create({ source_type: 'google-sheet', source_id: 'https://docs.google.com/spreadsheets/d/OTHER_SHEET_0123456/edit' });
      expect([missing.status, missing.body.code]).toEqual([400, 'invalid_source']);
      const notSheet = await create({ source_type: 'google-sheet', source_id: 'https://example.com/x.csv' });
      expect(notSheet.body.code).toBe('invalid_source');
    });
  });

  describe('reads, edits and state moves', () => {
    it('lists newest first with a state filter and hides other organizations', async () => {
      const key = await uploadCsv(svc, auth, 'phone_number\n+15550005001\n');
      const a = (await create({ source_id: key, name: 'First' })).body;
      const b = (await create({ source_id: key, name: 'Second' })).body;
      const list = await svc.get('/campaign', auth);
      expect(list.body.campaigns.slice(0, 2).map((c: { id: number }) => c.id)).toEqual([b.id, a.id]);
      expect((await svc.get('/campaign?state=running', auth)).body.campaigns.every((c: { state: string }) => c.state === 'running')).toBe(true);
      expect((await svc.get('/campaign?state=nope', auth)).status).toBe(422);
      expect((await svc.get(`/campaign/${a.id}`, otherAuth)).status).toBe(404);
      expect((await svc.get(`/campaign/${a.id}`, otherAuth)).body.code).toBe('campaign_not_found');
      expect((await svc.get('/campaign', otherAuth)).body.campaigns.some((c: { id: number }) => c.id === a.id)).toBe(false);
      expect((await svc.post(`/campaign/${a.id}/start`, undefined, otherAuth)).status).toBe(404);
      expect((await svc.patch(`/campaign/${a.id}`, { name: 'x' }, otherAuth)).status).toBe(404);
      expect((await svc.get(`/campaign/${a.id}/runs`, otherAuth)).status).toBe(404);
    });

    it('follows the state table, refusing every other move with 409, and PATCH only in draft or paused', async () => {
      const key = await uploadCsv(svc, auth, csvOf(30));
      const c = (await create({ source_id: key, max_concurrency: 1 })).body;
      const move = (action: string) => svc.post(`/campaign/${c.id}/${action}`, undefined, auth);
      for (const action of ['pause', 'resume']) expect([(await move(action)).body.code]).toEqual(['invalid_state_transition']);
      const patched = await svc.patch(`/campaign/${c.id}`, { name: 'Renamed', circuit_breaker: { enabled: true }, schedule_config: null }, auth);
      expect(patched.body).toMatchObject({ name: 'Renamed', circuit_breaker: { enabled: true, failure_threshold: 0.5 } });
      const started = await move('start');
      expect(started.body).toMatchObject({ state: 'running' });
      expect(started.body.started_at).toMatch(/Z$/);
      expect((await move('start')).status).toBe(409);
      expect((await move('resume')).status).toBe(409);
      const refused = await svc.patch(`/campaign/${c.id}`, { max_concurrency: 2 }, auth);
      expect([refused.status, refused.body.code]).toEqual([409, 'campaign_not_editable']);
      expect((await move('pause')).body.state).toBe('paused');
      expect((await move('pause')).status).toBe(409);
      expect((await svc.patch(`/campaign/${c.id}`, { max_concurrency: 2 }, auth)).body.max_concurrency).toBe(2);
      expect((await move('resume')).body.state).toBe('running');
      expect((await move('pause')).body.state).toBe('paused');
      expect((await move('start')).body.state).toBe('running');
      expect((await move('cancel')).body.state).toBe('cancelled');
      for (const action of ['start', 'pause', 'resume', 'cancel']) expect((await move(action)).status).toBe(409);
      expect((await svc.patch(`/campaign/${c.id}`, { name: 'x' }, auth)).body.code).toBe('campaign_not_editable');
      const events = (await svc.get(`/campaign/${c.id}`, auth)).body.logs.map((l: { event: string }) => l.event);
      expect(events).toEqual(expect.arrayContaining(['campaign_started', 'campaign_paused', 'campaign_resumed', 'campaign_cancelled']));
      const draft = (await create({ source_id: key })).body;
      expect((await svc.post(`/campaign/${draft.id}/cancel`, undefined, auth)).body.state).toBe('cancelled');
    });

    it('refuses to delete a telephony configuration a campaign uses', async () => {
      const cfg = await createSimulatorConfig(svc, auth, { name: 'Second', isDefault: false });
      const key = await uploadCsv(svc, auth, 'phone_number\n+15550006001\n');
      const c = (await create({ source_id: key, telephony_configuration_id: cfg })).body;
      const del = await svc.delete(`/organizations/telephony-configs/${cfg}`, auth);
      expect([del.status, del.body.code]).toEqual([409, 'telephony_configuration_in_use']);
      await svc.post(`/campaign/${c.id}/cancel`, undefined, auth);
      expect((await svc.delete(`/organizations/telephony-configs/${cfg}`, auth)).status).toBe(200);
    });
  });

  it('counts a campaign mixing every simulator outcome, retrying after the delay', async () => {
    // 00 dial fails, 01 busy, 02 no answer, 03 voicemail, else answered; 4 contacts of each
    const suffixes = ['00', '01', '02', '03', '04'];
    const key = await uploadCsv(svc, auth, csvOf(20, (i) => suffixes[i % 5]!));
    const c = (await create({ source_id: key, max_concurrency: 3, retry_config: { max_retries: 1, retry_delay_seconds: 30 } })).body;
    await svc.post(`/campaign/${c.id}/start`, undefined, auth);
    const engine = svc.container.get<CampaignEngine>(CampaignEngine);
    const get = async () => (await svc.get(`/campaign/${c.id}`, auth)).body;
    await waitFor(async () => (await get()).processed_rows === 12 && (await get()).executed_count === 20);
    let s = await get();
    // first pass: 00 (4) failed, 03 (4) voicemail, 04 (4) answered are final; 01 and 02 wait 30 s for a retry
    expect(s).toMatchObject({ state: 'running', processed_rows: 12, failed_rows: 8, executed_count: 20, total_queued_count: 28 });
    clock.offset += 29_000;
    await engine.trigger(org, c.id);
    await engine.idle();
    expect((await get()).executed_count).toBe(20);
    clock.offset += 1_000;
    await engine.trigger(org, c.id);
    await waitFor(async () => (await get()).state === 'completed');
    s = await get();
    expect(s).toMatchObject({ total_rows: 20, processed_rows: 20, failed_rows: 16, executed_count: 28, total_queued_count: 28 });
    expect(s.logs.map((l: { event: string }) => l.event)).toEqual(expect.arrayContaining(['call_dispatch_failed', 'campaign_completed']));
    const runs = await svc.get(`/campaign/${c.id}/runs?limit=100`, auth);
    expect(runs.body).toMatchObject({ total_count: 28, page: 1, limit: 100, total_pages: 1 });
    const dispositions = runs.body.runs.map((r: { disposition: string }) => r.disposition).sort();
    expect(new Set(dispositions)).toEqual(new Set(['failed', 'busy', 'no_answer', 'voicemail', 'completed']));
    const answered = runs.body.runs.find((r: { initial_context: { phone_number: string } }) => r.initial_context.phone_number.endsWith('04'));
    expect(answered).toMatchObject({ mode: 'outbound', campaign_id: c.id, status: 'completed' });
    expect(answered.initial_context).toMatchObject({ campaign_id: c.id, attempt: 1, first_name: expect.any(String), called_number: answered.initial_context.phone_number });
    const page2 = await svc.get(`/campaign/${c.id}/runs?page=2&limit=20`, auth);
    expect(page2.body.runs.length).toBe(8);
    clock.offset = 0;
  });
});
