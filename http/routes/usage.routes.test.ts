import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApplyCallStatus } from '../../core/calls/apply-call-status.use-case.js';
import { RunRepository } from '../../core/ports/run.repository.port.js';
import { WorkflowRepository } from '../../core/ports/workflow.repository.port.js';
import type { Run } from '../../core/runs/run.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { startTestService, type TestService } from '../../test/support/test-service.js';

const T = (iso: string) => new Date(iso);
const q = (params: Record<string, unknown>) =>
  '?' + Object.entries(params).map(([k, v]) => `${k}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');

describe('usage API', () => {
  let svc: TestService;
  let a: { token: string; organizationId: number };
  let b: { token: string; organizationId: number };
  let wf: { id: number; definitionId: number };
  let runs: Run[];
  let n = 0;

  const workflow = async (org: number, name: string) => {
    const { workflow: w, current } = await svc.container.get<WorkflowRepository>(WorkflowRepository).create(org, {
      name, workflowUuid: `00000000-0000-4000-b000-${String(++n).padStart(12, '0')}`, definition: structuredClone(exampleWorkflowDefinition),
      templateContextVariables: {}, workflowConfigurations: {}, now: T('2026-01-01T00:00:00Z'),
    });
    return { id: w.id, definitionId: current.id };
  };

  /** A run created at `at` and finished through the one status path (so it is charged like a real call). */
  const call = async (org: number, w: { id: number; definitionId: number }, at: string, o: {
    mode?: 'inbound' | 'outbound'; caller?: string; called?: string; campaignId?: number; duration?: number; outcome?: 'completed' | 'busy'; tokens?: number; name?: string;
  } = {}) => {
    const repo = svc.container.get<RunRepository>(RunRepository);
    const run = await repo.create(org, {
      workflowId: w.id, definitionId: w.definitionId, name: o.name ?? `Call ${o.called ?? ''}`, mode: o.mode ?? 'outbound', campaignId: o.campaignId ?? null,
      provider: 'simulator', callerNumber: o.caller ?? '+15550000001', calledNumber: o.called ?? '+442071234567',
      initialContext: { first_name: 'Ada' }, now: T(at),
    });
    if (o.duration === undefined) return run;
    if (o.tokens) await repo.applyStatus(org, run.id, { status: 'in_progress', costInfo: { service_token_usage: o.tokens }, at: T(at) });
    const r = await svc.container.get(ApplyCallStatus).execute('simulator', {
      kind: 'status', status: o.outcome === 'busy' ? 'failed' : 'completed', outcome: o.outcome ?? 'completed', durationSeconds: o.duration, at: T(at),
    }, run.id);
    if (!r.applied) throw new Error('status not applied');
    return r.run;
  };

  beforeAll(async () => {
    svc = await startTestService();
    a = await svc.signup();
    b = await svc.signup();
    expect((await svc.put('/organizations/settings', { price_per_minute_usd: 0.5 }, a)).status).toBe(200);
    wf = await workflow(a.organizationId, 'Sales agent');
    const wf2 = await workflow(a.organizationId, 'Support agent');
    runs = [
      await call(a.organizationId, wf, '2026-03-01T00:00:00.000Z', { duration: 60, tokens: 100, campaignId: 7, called: '+442071111111' }),
      await call(a.organizationId, wf, '2026-03-02T12:00:00.000Z', { duration: 90, tokens: 50, outcome: 'busy', called: '+442072222222' }),
      await call(a.organizationId, wf2, '2026-03-03T08:30:00.000Z', { mode: 'inbound', caller: '+15551234567', called: '+15550000009', duration: 30, tokens: 10 }),
      await call(a.organizationId, wf2, '2026-03-05T23:59:59.999Z', { campaignId: 7, called: '=HYPERLINK("http://evil")', name: '@SUM(1,2)' }),
      await call(a.organizationId, wf, '2026-03-05T23:59:59.999Z', { duration: 121, campaignId: 8, called: '+442073333333' }),
    ];
    const wfB = await workflow(b.organizationId, 'Theirs');
    await call(b.organizationId, wfB, '2026-03-02T00:00:00.000Z', { duration: 600, tokens: 999, campaignId: 7 });
  });
  afterAll(async () => {
    await svc.close();
  });

  const ids = (body: { runs: { id: number }[] }) => body.runs.map((r) => r.id);

  it('lists the organization\'s runs newest first (ties by id desc) with totals and the entry fields of spec 2.9', async () => {
    const r = await svc.get('/organizations/usage/runs', a);
    expect(r.status).toBe(200);
    expect(ids(r.body)).toEqual([runs[4]!.id, runs[3]!.id, runs[2]!.id, runs[1]!.id, runs[0]!.id]);
    expect(r.body).toMatchObject({ total_count: 5, page: 1, limit: 50, total_pages: 1, total_service_tokens: 160, total_duration_seconds: 301 });
    const first = r.body.runs.find((e: { id: number }) => e.id === runs[0]!.id);
    expect(first).toEqual({
      id: runs[0]!.id, workflow_id: wf.id, workflow_name: 'Sales agent', name: 'Call +442071111111', created_at: '2026-03-01T00:00:00.000Z',
      service_token_usage: 100, call_duration_seconds: 60, recording_url: null, transcript_url: null, phone_number: '+442071111111',
      caller_number: '+15550000001', called_number: '+442071111111', call_type: 'outbound', disposition: 'completed',
      initial_context: { first_name: 'Ada', caller_number: '+15550000001', called_number: '+442071111111' },
      gathered_context: { mapped_call_disposition: 'completed' }, charge_usd: 0.5,
    });
    const inbound = r.body.runs.find((e: { id: number }) => e.id === runs[2]!.id);
    expect(inbound).toMatchObject({ call_type: 'inbound', phone_number: '+15551234567', charge_usd: 0.25, workflow_name: 'Support agent' });
    const busy = r.body.runs.find((e: { id: number }) => e.id === runs[1]!.id);
    expect(busy).toMatchObject({ disposition: 'busy', charge_usd: 0.75 });
    const unfinished = r.body.runs.find((e: { id: number }) => e.id === runs[3]!.id);
    expect(unfinished).toMatchObject({ call_duration_seconds: 0, charge_usd: 0, disposition: null, service_token_usage: 0 });
  });

  it('records duration, tokens and charge in the run\'s cost_info at finalization, at the price of that moment', async () => {
    const r = await svc.get(`/workflow/${wf.id}/runs/${runs[4]!.id}`, a);
    expect(r.status).toBe(200);
    expect(r.body.cost_info).toEqual({ call_duration_seconds: 121, service_token_usage: 0, charge_usd: 1.008333 });
    const withTokens = await svc.get(`/workflow/${wf.id}/runs/${runs[0]!.id}`, a);
    expect(withTokens.body.cost_info).toEqual({ call_duration_seconds: 60, service_token_usage: 100, charge_usd: 0.5 });
  });

  it('treats start_date and end_date as inclusive, UTC without an offset, and honours offsets', async () => {
    const get = async (p: Record<string, unknown>) => ids((await svc.get(`/organizations/usage/runs${q(p)}`, a)).body);
    expect(await get({ start_date: '2026-03-01T00:00:00Z', end_date: '2026-03-03T08:30:00Z' })).toEqual([runs[2]!.id, runs[1]!.id, runs[0]!.id]);
    expect(await get({ start_date: '2026-03-01T00:00:00.001', end_date: '2026-03-03T08:29:59.999' })).toEqual([runs[1]!.id]);
    expect(await get({ start_date: '2026-03-05T23:59:59.999' })).toEqual([runs[4]!.id, runs[3]!.id]);
    expect(await get({ end_date: '2026-03-05T23:59:59.998Z' })).toEqual([runs[2]!.id, runs[1]!.id, runs[0]!.id]);
    expect(await get({ start_date: '2026-03-02T13:00:00+01:00', end_date: '2026-03-02T13:00:00+01:00' })).toEqual([runs[1]!.id]);
    expect(await get({ start_date: '2026-03-03', end_date: '2026-03-04' })).toEqual([runs[2]!.id]);
    expect(await get({ start_date: '2026-03-04T00:00:00Z', end_date: '2026-03-01T00:00:00Z' })).toEqual([]);
  });

  it('answers 422 for unparseable dates and for filters that are not a JSON array', async () => {
    for (const [p, loc] of [
      [{ start_date: 'yesterday' }, ['query', 'start_date']],
      [{ end_date: '2026-02-30T00:00:00Z' }, ['query', 'end_date']],
      [{ end_date: '2026-03-01T25:00:00Z' }, ['query', 'end_date']],
      [{ filters: 'not json' }, ['query', 'filters']],
      [{ filters: '{"attribute":"runId"}' }, ['query', 'filters']],
      [{ filters: '42' }, ['query', 'filters']],
    ] as const) {
      const r = await svc.get(`/organizations/usage/runs?${Object.entries(p).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}`, a);
      expect([p, r.status]).toEqual([p, 422]);
      expect(r.body.detail[0].loc).toEqual(loc);
    }
    for (const p of ['page=0', 'limit=0', 'limit=101', 'page=abc']) {
      const r = await svc.get(`/organizations/usage/runs?${p}`, a);
      expect([p, r.status]).toEqual([p, 422]);
      expect(r.body.detail[0].loc[0]).toBe('query');
    }
    expect((await svc.get('/organizations/usage/runs.csv?filters=%7B%7D', a)).status).toBe(422);
  });

  it('applies every filter of the spec plus callDirection, and ignores unknown or ill-typed ones', async () => {
    const get = async (filters: unknown) => {
      const r = await svc.get(`/organizations/usage/runs${q({ filters })}`, a);
      expect(r.status).toBe(200);
      return ids(r.body);
    };
    const all = [runs[4]!.id, runs[3]!.id, runs[2]!.id, runs[1]!.id, runs[0]!.id];
    expect(await get([{ attribute: 'runId', type: 'number', value: { value: runs[1]!.id } }])).toEqual([runs[1]!.id]);
    expect(await get([{ attribute: 'workflowId', type: 'number', value: { value: wf.id } }])).toEqual([runs[4]!.id, runs[1]!.id, runs[0]!.id]);
    expect(await get([{ attribute: 'campaignId', type: 'number', value: { value: 7 } }])).toEqual([runs[3]!.id, runs[0]!.id]);
    expect(await get([{ attribute: 'callerNumber', type: 'text', value: { value: '555123' } }])).toEqual([runs[2]!.id]);
    expect(await get([{ attribute: 'calledNumber', type: 'text', value: { value: '+44207' } }])).toEqual([runs[4]!.id, runs[1]!.id, runs[0]!.id]);
    expect(await get([{ attribute: 'dispositionCode', type: 'multiSelect', value: { codes: ['busy', 'completed'] } }])).toEqual([runs[4]!.id, runs[2]!.id, runs[1]!.id, runs[0]!.id]);
    expect(await get([{ attribute: 'dispositionCode', type: 'multiSelect', value: { codes: ['busy'] } }])).toEqual([runs[1]!.id]);
    expect(await get([{ attribute: 'duration', type: 'numberRange', value: { min: 60, max: 90 } }])).toEqual([runs[1]!.id, runs[0]!.id]);
    expect(await get([{ attribute: 'duration', type: 'numberRange', value: { min: 0, max: 0 } }])).toEqual([runs[3]!.id]);
    expect(await get([{ attribute: 'duration', type: 'numberRange', value: { min: 100 } }])).toEqual([runs[4]!.id]);
    expect(await get([{ attribute: 'callDirection', type: 'radio', value: { value: 'inbound' } }])).toEqual([runs[2]!.id]);
    expect(await get([{ attribute: 'callDirection', type: 'radio', value: { value: 'outbound' } }])).toEqual([runs[4]!.id, runs[3]!.id, runs[1]!.id, runs[0]!.id]);
    expect(await get([
      { attribute: 'workflowId', type: 'number', value: { value: wf.id } },
      { attribute: 'duration', type: 'numberRange', value: { min: 61, max: 200 } },
    ])).toEqual([runs[4]!.id, runs[1]!.id]);
    // ignored: unknown attribute, wrong type, empty text / code list, non-object items
    expect(await get([
      { attribute: 'color', type: 'text', value: { value: 'blue' } },
      { attribute: 'runId', type: 'text', value: { value: runs[1]!.id } },
      { attribute: 'dispositionCode', type: 'multiSelect', value: { codes: [] } },
      { attribute: 'callerNumber', type: 'text', value: { value: '' } },
      { attribute: 'createdAt', type: 'dateRange', value: { from: '2026-03-01' } },
      'junk', 7, null,
    ])).toEqual(all);
    // a known attribute and type with an ill-shaped value is the client's mistake: 422, never "everything"
    for (const [bad, type] of [
      [{ attribute: 'campaignId', type: 'number', value: { value: '7' } }, 'float_type'],
      [{ attribute: 'campaignId', type: 'number', value: 7 }, 'dict_type'],
      [{ attribute: 'duration', type: 'numberRange', value: { min: 'a' } }, 'float_type'],
      [{ attribute: 'duration', type: 'numberRange', value: { min: 90, max: 60 } }, 'value_error'],
      [{ attribute: 'dispositionCode', type: 'multiSelect', value: { codes: 'busy' } }, 'list_type'],
      [{ attribute: 'callDirection', type: 'radio', value: { value: 'sideways' } }, 'literal_error'],
    ] as const) {
      for (const path of ['/organizations/usage/runs', '/organizations/usage/runs.csv']) {
        const r = await svc.get(`${path}${q({ filters: [{ attribute: 'color', type: 'text', value: {} }, bad] })}`, a);
        expect([path, r.status]).toEqual([path, 422]);
        expect(r.body.detail).toEqual([{ loc: ['query', 'filters', 1, 'value'], msg: expect.any(String), type }]);
      }
    }
    // contradicting conditions match nothing
    expect(await get([
      { attribute: 'runId', type: 'number', value: { value: runs[1]!.id } },
      { attribute: 'runId', type: 'number', value: { value: runs[2]!.id } },
    ])).toEqual([]);
    expect(await get([])).toEqual(all);
  });

  it('paginates with page and limit, totals covering every match and total_pages = ceil(count / limit)', async () => {
    const page = async (p: number, l: number) => (await svc.get(`/organizations/usage/runs?page=${p}&limit=${l}`, a)).body;
    const p1 = await page(1, 2);
    expect(p1).toMatchObject({ total_count: 5, page: 1, limit: 2, total_pages: 3, total_service_tokens: 160, total_duration_seconds: 301 });
    expect(ids(p1)).toEqual([runs[4]!.id, runs[3]!.id]);
    expect(ids(await page(2, 2))).toEqual([runs[2]!.id, runs[1]!.id]);
    const p3 = await page(3, 2);
    expect(ids(p3)).toEqual([runs[0]!.id]);
    expect(p3.total_duration_seconds).toBe(301);
    const p4 = await page(4, 2);
    expect(p4).toMatchObject({ runs: [], total_count: 5, page: 4, total_pages: 3 });
    expect(ids(await page(1, 100))).toHaveLength(5);
    const filtered = (await svc.get(`/organizations/usage/runs${q({ filters: [{ attribute: 'campaignId', type: 'number', value: { value: 7 } }] })}&limit=1&page=2`, a)).body;
    expect(filtered).toMatchObject({ total_count: 2, total_pages: 2, total_service_tokens: 100, total_duration_seconds: 60 });
    expect(ids(filtered)).toEqual([runs[0]!.id]);
  });

  it('shows another organization nothing of ours, and us nothing of theirs', async () => {
    const theirs = await svc.get('/organizations/usage/runs', b);
    expect(theirs.body.total_count).toBe(1);
    expect(theirs.body.total_service_tokens).toBe(999);
    expect(ids(theirs.body)).not.toContain(runs[0]!.id);
    const probe = await svc.get(`/organizations/usage/runs${q({ filters: [{ attribute: 'runId', type: 'number', value: { value: runs[0]!.id } }] })}`, b);
    expect(probe.body).toMatchObject({ runs: [], total_count: 0, total_service_tokens: 0, total_duration_seconds: 0 });
    const csv = await svc.get('/organizations/usage/runs.csv', b);
    expect(csv.text.trim().split('\r\n')).toHaveLength(2);
    expect((await svc.get('/organizations/settings', b)).body.price_per_minute_usd).toBe(0);
    expect((await svc.get('/organizations/usage/runs')).status).toBe(401);
    expect((await svc.get('/organizations/usage/runs.csv')).status).toBe(401);
  });

  it('exports the same query as CSV: header, same rows and order, quoted and safe against formula injection', async () => {
    const r = await svc.request('GET', `/organizations/usage/runs.csv${q({ filters: [{ attribute: 'callDirection', type: 'radio', value: { value: 'outbound' } }] })}`, { auth: a });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(r.headers.get('content-disposition')).toContain('attachment');
    const lines = r.text.split('\r\n');
    expect(lines.at(-1)).toBe('');
    expect(lines[0]).toBe('id,created_at,workflow_id,workflow_name,name,call_type,phone_number,caller_number,called_number,disposition,'
      + 'call_duration_seconds,service_token_usage,charge_usd,recording_url,transcript_url,initial_context,gathered_context');
    expect(lines.slice(1, -1).map((l) => Number(l.split(',')[0]))).toEqual([runs[4]!.id, runs[3]!.id, runs[1]!.id, runs[0]!.id]);
    const evil = lines.find((l) => l.startsWith(`${runs[3]!.id},`))!;
    // '=HYPERLINK("http://evil")' -> quoted, inner quotes doubled, and defused with a leading apostrophe
    expect(evil).toContain(`"'=HYPERLINK(""http://evil"")"`);
    expect(evil).toContain(`"'@SUM(1,2)"`);
    expect(evil).not.toMatch(/,=|,\+|,-|,@/);
    // phone numbers start with + : defused too
    expect(lines.find((l) => l.startsWith(`${runs[0]!.id},`))).toContain(`,'+442071111111,'+15550000001,'+442071111111,completed,60,100,0.5,,,`);
    expect(lines.find((l) => l.startsWith(`${runs[0]!.id},`))).toContain('"{""first_name"":""Ada""');
  });
});

describe('organization settings API', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('defaults the price to 0, stores a new one, and validates it', async () => {
    const a = await svc.signup();
    expect((await svc.get('/organizations/settings', a)).body).toEqual({ price_per_minute_usd: 0, updated_at: null });
    const put = await svc.put('/organizations/settings', { price_per_minute_usd: 0.02, ignored: true }, a);
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ price_per_minute_usd: 0.02, updated_at: expect.stringMatching(/Z$/) });
    expect((await svc.get('/organizations/settings', a)).body.price_per_minute_usd).toBe(0.02);
    for (const body of [{ price_per_minute_usd: -1 }, { price_per_minute_usd: '1' }, {}, { price_per_minute_usd: null }]) {
      const r = await svc.put('/organizations/settings', body, a);
      expect([body, r.status]).toEqual([body, 422]);
      expect(r.body.detail[0].loc.slice(0, 2)).toEqual(['body', 'price_per_minute_usd']);
    }
    expect((await svc.get('/organizations/settings', a)).body.price_per_minute_usd).toBe(0.02);
    const key = await svc.post('/user/api-keys', { name: 'k' }, a);
    expect((await svc.put('/organizations/settings', { price_per_minute_usd: 0 }, { apiKey: key.body.api_key })).body.price_per_minute_usd).toBe(0);
    expect((await svc.get('/organizations/settings')).status).toBe(401);
  });
});
