import { describe, expect, it, jest } from '@jest/globals';
import { ApplyCallStatus } from '../calls/apply-call-status.use-case.js';
import { CallOutcomeListeners } from '../calls/call-outcome-listener.js';
import type { Logger } from '../ports/logger.port.js';
import type { RunRepository, RunStatusUpdate } from '../ports/run.repository.port.js';
import type { UsageRepository } from '../ports/usage.repository.port.js';
import type { ObjectStore } from '../ports/object-store.port.js';
import type { Run } from '../runs/run.js';
import { RunViews } from '../runs/runs.use-case.js';
import { csvCell, csvLine } from './usage-csv.js';
import { ExportUsageCsv, GetUsageReport, UsageEntries } from './usage-report.use-case.js';
import { chargeFor, compareUsageOrder, matchesUsageFilter, type UsageRecord } from './usage.js';

const run = (over: Partial<Run> = {}): Run => ({
  id: 1, organizationId: 1, workflowId: 2, definitionId: 3, name: 'call', mode: 'outbound', status: 'completed', disposition: 'done',
  campaignId: 4, attemptId: null, telephonyConfigurationId: null, provider: 'simulator', providerCallId: null, callerNumber: '+15550000001',
  calledNumber: '+442071234567', initialContext: {}, gatheredContext: {}, logs: [], annotations: {},
  costInfo: { call_duration_seconds: 30, service_token_usage: 5, charge_usd: 0.25 }, durationSeconds: 30, transcriptKey: null,
  recordingKey: null, createdAt: new Date(1000), startedAt: null, endedAt: null, updatedAt: new Date(1000), ...over,
});

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child() { return silent; } } as unknown as Logger;
const store = { signedDownloadUrl: async (k: string) => `https://files/${k}` } as unknown as ObjectStore;

describe('chargeFor', () => {
  it('charges duration in minutes × price per minute, billed by the second, to a millionth of a dollar', () => {
    expect(chargeFor(60, 0.5)).toBe(0.5);
    expect(chargeFor(90, 0.02)).toBe(0.03);
    expect(chargeFor(121, 0.5)).toBe(1.008333);
    expect(chargeFor(1, 0.1)).toBe(0.001667);
    expect(chargeFor(36, 0.5)).toBe(0.3);
    for (const [d, p] of [[0, 1], [null, 1], [undefined, 1], [-5, 1], [Number.NaN, 1], [60, 0], [60, -1], [60, Number.POSITIVE_INFINITY]] as const) {
      expect(chargeFor(d, p)).toBe(0);
    }
  });
});

describe('matchesUsageFilter and the order', () => {
  it('counts a missing duration as 0 and never matches substrings or codes on missing values', () => {
    expect(matchesUsageFilter(run({ durationSeconds: null }), { durationMax: 0 })).toBe(true);
    expect(matchesUsageFilter(run({ durationSeconds: null }), { durationMin: 0.1 })).toBe(false);
    expect(matchesUsageFilter(run({ callerNumber: null }), { callerNumberContains: ['1'] })).toBe(false);
    expect(matchesUsageFilter(run({ disposition: null }), { dispositions: ['done'] })).toBe(false);
    expect(matchesUsageFilter(run(), { createdFrom: new Date(1000), createdTo: new Date(1000) })).toBe(true);
    expect(matchesUsageFilter(run(), { createdFrom: new Date(1001) })).toBe(false);
  });
  it('orders newest first, then the higher id', () => {
    const xs = [run({ id: 1, createdAt: new Date(5) }), run({ id: 3, createdAt: new Date(5) }), run({ id: 2, createdAt: new Date(9) })];
    expect(xs.sort(compareUsageOrder).map((r) => r.id)).toEqual([2, 3, 1]);
  });
});

describe('csvCell', () => {
  it('defuses every formula start with a leading apostrophe', () => {
    for (const s of ['=1+2', '+15551234', '-2', '@SUM(A1)', '\tx', '\rx']) expect(csvCell(s).replace(/^"|"$/g, '').startsWith(`'${s[0]}`)).toBe(true);
    expect(csvCell('=cmd|" /C calc"!A0')).toBe(`"'=cmd|"" /C calc""!A0"`);
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a=b')).toBe('a=b');
  });
  it('quotes commas, quotes and line breaks, and writes null as empty, objects as JSON', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell(0)).toBe('0');
    expect(csvCell({ a: 'x,y' })).toBe('"{""a"":""x,y""}"');
    expect(csvLine([1, 'a', null])).toBe('1,a,\r\n');
  });
});

describe('usage use cases', () => {
  const records = (n: number): UsageRecord[] =>
    Array.from({ length: n }, (_, i) => ({ run: run({ id: n - i, createdAt: new Date(10_000 - i) }), workflowName: 'Agent' }));

  it('exports lazily: storage is read batch by batch as the CSV is consumed, with keyset cursors', async () => {
    const all = records(25);
    const after = jest.fn(async (_org: number, _f: unknown, cursor: { id: number } | null, limit: number) => {
      const start = cursor ? all.findIndex((r) => r.run.id === cursor.id) + 1 : 0;
      return all.slice(start, start + limit);
    });
    const usage = { page: jest.fn(), after } as unknown as UsageRepository;
    const lines = new ExportUsageCsv(usage, new UsageEntries(new RunViews(store)), 10).execute(1, {});
    const it = lines[Symbol.asyncIterator]();
    expect((await it.next()).value).toMatch(/^id,created_at,/);
    expect(after).toHaveBeenCalledTimes(0);
    const first = (await it.next()).value as string;
    expect(first.split('\r\n').filter(Boolean)).toHaveLength(10);
    expect(after).toHaveBeenCalledTimes(1);
    let rest = '';
    for (let r = await it.next(); !r.done; r = await it.next()) rest += r.value;
    expect(rest.split('\r\n').filter(Boolean)).toHaveLength(15);
    expect(after.mock.calls.map((c) => c[2]?.id ?? null)).toEqual([null, 16, 6]);
  });

  it('validates before producing anything, and skips storage when the conditions contradict', async () => {
    const usage = { page: jest.fn(), after: jest.fn() } as unknown as UsageRepository;
    const entries = new UsageEntries(new RunViews(store));
    expect(() => new ExportUsageCsv(usage, entries).execute(1, { filters: '{' })).toThrow('filters');
    await expect(new GetUsageReport(usage, entries).execute(1, { start_date: 'x', page: 1, limit: 10 })).rejects.toThrow('start_date');
    const contradiction = JSON.stringify([{ attribute: 'callDirection', type: 'radio', value: { value: 'inbound' } }, { attribute: 'callDirection', type: 'radio', value: { value: 'outbound' } }]);
    expect(await new GetUsageReport(usage, entries).execute(1, { filters: contradiction, page: 2, limit: 10 }))
      .toEqual({ entries: [], totals: { count: 0, serviceTokens: 0, durationSeconds: 0 }, page: 2, limit: 10, totalPages: 0 });
    expect(usage.page).not.toHaveBeenCalled();
  });

  it('builds entries: the other party as phone_number, signed artifact URLs, the recorded charge', async () => {
    const e = new UsageEntries(new RunViews(store));
    const inbound = await e.entry({ run: run({ mode: 'inbound', recordingKey: 'r.wav' }), workflowName: null });
    expect(inbound).toMatchObject({ phoneNumber: '+15550000001', callType: 'inbound', recordingUrl: 'https://files/r.wav', transcriptUrl: null, workflowName: '', chargeUsd: 0.25 });
    const outbound = await e.entry({ run: run({ durationSeconds: null }), workflowName: 'A' });
    expect(outbound).toMatchObject({ phoneNumber: '+442071234567', callDurationSeconds: 0, disposition: 'done', gatheredContext: { mapped_call_disposition: 'done' } });
  });
});

describe('charging at finalization (ApplyCallStatus)', () => {
  const setup = (price: () => Promise<number>) => {
    const stored = run({ status: 'in_progress', costInfo: { call_duration_seconds: 0, service_token_usage: 7, charge_usd: 0 }, durationSeconds: null });
    const applied: RunStatusUpdate[] = [];
    const runs = {
      findForProviderEvent: async () => stored,
      applyStatus: async (_o: number, _id: number, u: RunStatusUpdate) => {
        applied.push(u);
        return { applied: true, run: { ...stored, status: u.status } };
      },
    } as unknown as RunRepository;
    const settings = { get: async (org: number) => ({ organizationId: org, pricePerMinuteUsd: await price(), updatedAt: null }) };
    const apply = new ApplyCallStatus(runs, new CallOutcomeListeners(), { now: () => new Date(5000) }, silent, settings);
    return { apply, applied };
  };

  it('records charge_usd from the organization\'s price together with the duration', async () => {
    const { apply, applied } = setup(async () => 0.6);
    await apply.execute('simulator', { kind: 'status', status: 'completed', outcome: 'completed', durationSeconds: 45 }, 1);
    expect(applied[0]!.costInfo).toEqual({ call_duration_seconds: 45, charge_usd: 0.45 });
  });

  it('still applies the final status when the price cannot be read (charge left at 0), and charges nothing without a duration', async () => {
    const failing = setup(async () => { throw new Error('db down'); });
    const r = await failing.apply.execute('simulator', { kind: 'status', status: 'completed', outcome: 'completed', durationSeconds: 45 }, 1);
    expect(r.applied).toBe(true);
    expect(failing.applied[0]!.costInfo).toEqual({ call_duration_seconds: 45 });
    const noDuration = setup(async () => 1);
    await noDuration.apply.execute('simulator', { kind: 'status', status: 'failed', outcome: 'busy' }, 1);
    expect(noDuration.applied[0]!.costInfo).toBeUndefined();
  });
});
