import { describe, expect, it } from '@jest/globals';
import { ValidationError } from '../errors.js';
import { parseUsageDateTime, parseUsageQuery } from './usage-query.js';

const f = (items: unknown) => parseUsageQuery({ filters: JSON.stringify(items) });

describe('parseUsageDateTime', () => {
  it('reads ISO 8601 date-times as UTC unless they carry an offset', () => {
    expect(parseUsageDateTime('2026-03-01T10:20:30Z', 'start')!.toISOString()).toBe('2026-03-01T10:20:30.000Z');
    expect(parseUsageDateTime('2026-03-01T10:20:30', 'start')!.toISOString()).toBe('2026-03-01T10:20:30.000Z');
    expect(parseUsageDateTime('2026-03-01 10:20', 'start')!.toISOString()).toBe('2026-03-01T10:20:00.000Z');
    expect(parseUsageDateTime('2026-03-01T10:20:30+02:00', 'start')!.toISOString()).toBe('2026-03-01T08:20:30.000Z');
    expect(parseUsageDateTime('2026-03-01T10:20:30-0530', 'start')!.toISOString()).toBe('2026-03-01T15:50:30.000Z');
    expect(parseUsageDateTime('2026-03-01T10:20:30.5Z', 'start')!.toISOString()).toBe('2026-03-01T10:20:30.500Z');
    expect(parseUsageDateTime('2026-03-01', 'end')!.toISOString()).toBe('2026-03-01T00:00:00.000Z');
  });

  it('rounds a sub-millisecond fraction inward so both bounds stay inclusive of exactly what they cover', () => {
    expect(parseUsageDateTime('2026-03-01T00:00:00.0001Z', 'start')!.toISOString()).toBe('2026-03-01T00:00:00.001Z');
    expect(parseUsageDateTime('2026-03-01T23:59:59.999999Z', 'end')!.toISOString()).toBe('2026-03-01T23:59:59.999Z');
    expect(parseUsageDateTime('2026-03-01T00:00:00.000000Z', 'start')!.toISOString()).toBe('2026-03-01T00:00:00.000Z');
  });

  it('refuses what is not a real instant', () => {
    for (const s of ['', 'yesterday', '2026-13-01', '2026-02-29', '2026-04-31T00:00:00Z', '2026-03-01T24:00:00Z', '2026-03-01T10:60:00Z',
      '2026-03-01T10:00:61Z', '2026-03-01T10:00:00+25:00', '1700000000', '2026-3-1', '2026-03-01T10:00:00ZZ']) {
      expect([s, parseUsageDateTime(s, 'start')]).toEqual([s, null]);
    }
    expect(parseUsageDateTime('2028-02-29T00:00:00Z', 'start')).not.toBeNull();
  });
});

describe('parseUsageQuery', () => {
  it('throws a 422-shaped ValidationError for bad dates and for filters that are not a JSON array', () => {
    const issues = (input: Parameters<typeof parseUsageQuery>[0]) => {
      try {
        parseUsageQuery(input);
      } catch (e) {
        expect(e).toBeInstanceOf(ValidationError);
        return (e as ValidationError).issues.map((i) => [i.loc, i.type]);
      }
      throw new Error('expected a ValidationError');
    };
    expect(issues({ start_date: 'x' })).toEqual([[['query', 'start_date'], 'datetime_parsing']]);
    expect(issues({ end_date: 'x', start_date: 'y' })).toEqual([[['query', 'start_date'], 'datetime_parsing'], [['query', 'end_date'], 'datetime_parsing']]);
    expect(issues({ filters: '[' })).toEqual([[['query', 'filters'], 'json_invalid']]);
    expect(issues({ filters: '{}' })).toEqual([[['query', 'filters'], 'list_type']]);
    expect(issues({ filters: 'null' })).toEqual([[['query', 'filters'], 'list_type']]);
    expect(issues({ filters: '"[]"' })).toEqual([[['query', 'filters'], 'list_type']]);
  });

  it('maps every supported filter to the store-neutral filter', () => {
    expect(f([
      { attribute: 'runId', type: 'number', value: { value: 3 } },
      { attribute: 'workflowId', type: 'number', value: { value: 4 } },
      { attribute: 'campaignId', type: 'number', value: { value: 5 } },
      { attribute: 'callerNumber', type: 'text', value: { value: '+1' } },
      { attribute: 'calledNumber', type: 'text', value: { value: '44' } },
      { attribute: 'dispositionCode', type: 'multiSelect', value: { codes: ['a', 'b', 'a'] } },
      { attribute: 'duration', type: 'numberRange', value: { min: 1.5, max: 60 } },
      { attribute: 'callDirection', type: 'radio', value: { value: 'inbound' } },
    ])).toEqual({
      filter: {
        runId: 3, workflowId: 4, campaignId: 5, callerNumberContains: ['+1'], calledNumberContains: ['44'], dispositions: ['a', 'b'],
        durationMin: 1.5, durationMax: 60, mode: 'inbound',
      },
      matchesNothing: false,
    });
    expect(parseUsageQuery({ start_date: '2026-03-01', end_date: '2026-03-02T00:00:00Z' }).filter).toEqual({
      createdFrom: new Date('2026-03-01T00:00:00Z'), createdTo: new Date('2026-03-02T00:00:00Z'),
    });
    expect(parseUsageQuery({}).filter).toEqual({});
    expect(parseUsageQuery({ filters: '' }).filter).toEqual({});
  });

  it('ignores unknown attributes, mismatching types, non-object items and blank values', () => {
    expect(f([
      { attribute: 'nope', type: 'number', value: { value: 1 } },
      { attribute: 'runId', type: 'numberRange', value: { value: 1 } },
      { attribute: 'runId', value: { value: 1 } },
      { attribute: 'callDirection', type: 'text', value: { value: 'inbound' } },
      { attribute: 'calledNumber', type: 'text', value: { value: '' } },
      { attribute: 'dispositionCode', type: 'multiSelect', value: { codes: [] } },
      { attribute: 'duration', type: 'numberRange', value: {} },
      { attribute: 'duration', type: 'numberRange', value: { min: null, max: null } },
      null, 'x', 1, [], { type: 'number' },
    ])).toEqual({ filter: {}, matchesNothing: false });
  });

  it('refuses a known attribute and type with an ill-shaped value: 422 on ["query","filters",<index>,"value"], all at once', () => {
    const items = [
      { attribute: 'runId', type: 'number', value: 1 },
      { attribute: 'runId', type: 'number', value: { value: '5' } },
      { attribute: 'runId', type: 'number', value: [1] },
      { attribute: 'calledNumber', type: 'text', value: { value: 44 } },
      { attribute: 'dispositionCode', type: 'multiSelect', value: { codes: ['a', 1] } },
      { attribute: 'dispositionCode', type: 'multiSelect', value: { value: ['a'] } },
      { attribute: 'duration', type: 'numberRange', value: { min: '1', max: 2 } },
      { attribute: 'duration', type: 'numberRange', value: { min: 10, max: 5 } },
      { attribute: 'callDirection', type: 'radio', value: { value: 'INBOUND' } },
      { attribute: 'nope', type: 'number', value: 'ignored' },
    ];
    const err = (() => {
      try {
        f(items);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(ValidationError);
    const issues = (err as ValidationError).issues;
    expect(issues.map((i) => i.loc)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => ['query', 'filters', i, 'value']));
    expect(issues[1]).toEqual({ loc: ['query', 'filters', 1, 'value'], msg: 'Input should be a valid number ({"value": <number>})', type: 'float_type' });
    expect(issues[7]!.msg).toBe('min should be less than or equal to max');
  });

  it('narrows when an attribute repeats and flags contradictions so the store is not asked', () => {
    expect(f([
      { attribute: 'duration', type: 'numberRange', value: { min: 10 } },
      { attribute: 'duration', type: 'numberRange', value: { min: 5, max: 100 } },
      { attribute: 'duration', type: 'numberRange', value: { max: 50, min: null } },
      { attribute: 'calledNumber', type: 'text', value: { value: '1' } },
      { attribute: 'calledNumber', type: 'text', value: { value: '2' } },
      { attribute: 'dispositionCode', type: 'multiSelect', value: { codes: ['a', 'b'] } },
      { attribute: 'dispositionCode', type: 'multiSelect', value: { codes: ['b', 'c'] } },
    ])).toEqual({ filter: { durationMin: 10, durationMax: 50, calledNumberContains: ['1', '2'], dispositions: ['b'] }, matchesNothing: false });
    const nothing = (items: unknown[]) => f(items).matchesNothing;
    expect(nothing([{ attribute: 'runId', type: 'number', value: { value: 1 } }, { attribute: 'runId', type: 'number', value: { value: 2 } }])).toBe(true);
    expect(nothing([{ attribute: 'runId', type: 'number', value: { value: 1 } }, { attribute: 'runId', type: 'number', value: { value: 1 } }])).toBe(false);
    expect(nothing([{ attribute: 'campaignId', type: 'number', value: { value: 1.5 } }])).toBe(true);
    expect(nothing([{ attribute: 'workflowId', type: 'number', value: { value: -2 } }])).toBe(true);
    expect(nothing([{ attribute: 'dispositionCode', type: 'multiSelect', value: { codes: ['a'] } }, { attribute: 'dispositionCode', type: 'multiSelect', value: { codes: ['b'] } }])).toBe(true);
    expect(nothing([{ attribute: 'duration', type: 'numberRange', value: { min: 10 } }, { attribute: 'duration', type: 'numberRange', value: { max: 5 } }])).toBe(true);
    expect(nothing([{ attribute: 'callDirection', type: 'radio', value: { value: 'inbound' } }, { attribute: 'callDirection', type: 'radio', value: { value: 'outbound' } }])).toBe(true);
    expect(parseUsageQuery({ start_date: '2026-03-02', end_date: '2026-03-01' }).matchesNothing).toBe(true);
  });
});
