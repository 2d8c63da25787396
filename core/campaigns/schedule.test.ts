import { describe, expect, it } from '@jest/globals';
import { ValidationError } from '../errors.js';
import {
  canonicalTimeZone,
  convertTimeSlots,
  isValidTimeZone,
  isWithinSchedule,
  nextSlotOpening,
  parseScheduleConfig,
  parseWeekday,
  validateScheduleConfig,
  zoneOffsetMs,
  type ScheduleConfig,
  type ScheduleSlot,
} from './schedule.js';

const MON = 0;
const TUE = 1;
const WED = 2;
const SAT = 5;
const SUN = 6;

function cfg(timezone: string, slots: ScheduleSlot[], enabled = true): ScheduleConfig {
  return { enabled, timezone, slots };
}
function slot(day_of_week: number, start_time: string, end_time: string): ScheduleSlot {
  return { day_of_week, start_time, end_time };
}
const at = (iso: string) => new Date(iso);
const iso = (d: Date | null) => (d === null ? null : d.toISOString());

describe('isValidTimeZone', () => {
  it('accepts IANA names, links and UTC', () => {
    for (const tz of ['UTC', 'America/New_York', 'Asia/Kolkata', 'Asia/Calcutta', 'Pacific/Chatham', 'Etc/GMT+5']) {
      expect(isValidTimeZone(tz)).toBe(true);
    }
  });
  it('refuses unknown names, offsets, empty strings and non-strings', () => {
    for (const tz of ['Mars/Olympus', 'America/New York', '+05:30', '', ' UTC', 'UTC ', 42, null, undefined]) {
      expect(isValidTimeZone(tz)).toBe(false);
    }
  });
  it('matches case-insensitively and canonicalizes the spelling', () => {
    expect(isValidTimeZone('america/new_york')).toBe(true);
    expect(canonicalTimeZone('america/new_york')).toBe('America/New_York');
    expect(canonicalTimeZone('utc')).toBe('UTC');
    expect(canonicalTimeZone('Asia/Kolkata')).toBe('Asia/Kolkata');
    expect(() => canonicalTimeZone('Nowhere/Land')).toThrow(RangeError);
  });
});

describe('zoneOffsetMs', () => {
  it('follows DST in New York and the quarter-hour offsets of Chatham', () => {
    expect(zoneOffsetMs('America/New_York', Date.parse('2024-01-15T12:00:00Z'))).toBe(-5 * 3600_000);
    expect(zoneOffsetMs('America/New_York', Date.parse('2024-07-15T12:00:00Z'))).toBe(-4 * 3600_000);
    expect(zoneOffsetMs('Asia/Kolkata', Date.parse('2024-07-15T12:00:00Z'))).toBe(5.5 * 3600_000);
    expect(zoneOffsetMs('Pacific/Chatham', Date.parse('2024-07-15T12:00:00Z'))).toBe((12 * 60 + 45) * 60_000);
    expect(zoneOffsetMs('Pacific/Chatham', Date.parse('2024-01-15T12:00:00Z'))).toBe((13 * 60 + 45) * 60_000);
  });
});

describe('isWithinSchedule', () => {
  it('is always true without a config or when disabled', () => {
    expect(isWithinSchedule(null, at('2024-01-01T03:00:00Z'))).toBe(true);
    expect(isWithinSchedule(undefined, at('2024-01-01T03:00:00Z'))).toBe(true);
    expect(isWithinSchedule(cfg('UTC', [slot(MON, '09:00', '10:00')], false), at('2024-01-02T03:00:00Z'))).toBe(true);
  });

  it('is false everywhere when enabled with no slots', () => {
    expect(isWithinSchedule(cfg('UTC', []), at('2024-01-01T09:30:00Z'))).toBe(false);
  });

  it('includes the start and excludes the end (UTC, 2024-01-01 is a Monday)', () => {
    const c = cfg('UTC', [slot(MON, '09:00', '17:00')]);
    expect(isWithinSchedule(c, at('2024-01-01T08:59:59.999Z'))).toBe(false);
    expect(isWithinSchedule(c, at('2024-01-01T09:00:00.000Z'))).toBe(true);
    expect(isWithinSchedule(c, at('2024-01-01T16:59:59.999Z'))).toBe(true);
    expect(isWithinSchedule(c, at('2024-01-01T17:00:00.000Z'))).toBe(false);
    expect(isWithinSchedule(c, at('2024-01-02T10:00:00Z'))).toBe(false); // Tuesday
    expect(isWithinSchedule(c, at('2024-01-08T10:00:00Z'))).toBe(true); // next Monday
  });

  it('reads the wall clock of the zone across DST (America/New_York)', () => {
    const c = cfg('America/New_York', [slot(MON, '09:00', '17:00')]);
    // January: EST (UTC-5) → 14:00Z..22:00Z
    expect(isWithinSchedule(c, at('2024-01-08T13:59:00Z'))).toBe(false);
    expect(isWithinSchedule(c, at('2024-01-08T14:00:00Z'))).toBe(true);
    expect(isWithinSchedule(c, at('2024-01-08T21:59:00Z'))).toBe(true);
    expect(isWithinSchedule(c, at('2024-01-08T22:00:00Z'))).toBe(false);
    // July: EDT (UTC-4) → 13:00Z..21:00Z
    expect(isWithinSchedule(c, at('2024-07-08T12:59:00Z'))).toBe(false);
    expect(isWithinSchedule(c, at('2024-07-08T13:00:00Z'))).toBe(true);
    expect(isWithinSchedule(c, at('2024-07-08T21:00:00Z'))).toBe(false);
  });

  it('uses the local weekday, not the UTC one (Asia/Kolkata, UTC+05:30)', () => {
    const c = cfg('Asia/Kolkata', [slot(TUE, '00:00', '02:00')]);
    // Monday 2024-01-01 18:30Z is Tuesday 00:00 in Kolkata
    expect(isWithinSchedule(c, at('2024-01-01T18:29:59Z'))).toBe(false);
    expect(isWithinSchedule(c, at('2024-01-01T18:30:00Z'))).toBe(true);
    expect(isWithinSchedule(c, at('2024-01-01T20:29:59Z'))).toBe(true);
    expect(isWithinSchedule(c, at('2024-01-01T20:30:00Z'))).toBe(false);
  });

  it('covers a slot ending at 24:00 up to the last millisecond of the day', () => {
    const c = cfg('UTC', [slot(SAT, '22:00', '24:00')]);
    expect(isWithinSchedule(c, at('2024-01-06T22:00:00Z'))).toBe(true);
    expect(isWithinSchedule(c, at('2024-01-06T23:59:59.999Z'))).toBe(true);
    expect(isWithinSchedule(c, at('2024-01-07T00:00:00Z'))).toBe(false);
  });

  it('treats the repeated hour of a fall-back as covered twice', () => {
    // 2024-11-03 (Sunday): 02:00 EDT → 01:00 EST at 06:00Z
    const c = cfg('America/New_York', [slot(SUN, '01:15', '01:45')]);
    expect(isWithinSchedule(c, at('2024-11-03T05:15:00Z'))).toBe(true); // 01:15 EDT
    expect(isWithinSchedule(c, at('2024-11-03T05:45:00Z'))).toBe(false); // 01:45 EDT
    expect(isWithinSchedule(c, at('2024-11-03T06:15:00Z'))).toBe(true); // 01:15 EST
    expect(isWithinSchedule(c, at('2024-11-03T06:45:00Z'))).toBe(false); // 01:45 EST
  });

  it('ignores malformed slots instead of throwing', () => {
    const c = cfg('UTC', [slot(MON, '9am', '17:00'), slot(9, '09:00', '10:00'), slot(MON, '12:00', '11:00')]);
    expect(isWithinSchedule(c, at('2024-01-01T10:30:00Z'))).toBe(false);
  });
});

describe('nextSlotOpening', () => {
  it('returns `after` when there is no schedule, it is disabled, or `after` is inside a slot', () => {
    const t = at('2024-01-01T10:00:00.123Z');
    expect(iso(nextSlotOpening(null, t))).toBe(t.toISOString());
    expect(iso(nextSlotOpening(cfg('UTC', [slot(TUE, '09:00', '10:00')], false), t))).toBe(t.toISOString());
    expect(iso(nextSlotOpening(cfg('UTC', [slot(MON, '09:00', '17:00')]), t))).toBe(t.toISOString());
  });

  it('returns a fresh Date (callers may mutate it)', () => {
    const t = at('2024-01-01T10:00:00Z');
    const r = nextSlotOpening(null, t);
    expect(r).not.toBe(t);
  });

  it('returns null when no slot can ever open', () => {
    expect(nextSlotOpening(cfg('UTC', []), at('2024-01-01T00:00:00Z'))).toBeNull();
    expect(nextSlotOpening(cfg('UTC', [slot(MON, '10:00', '09:00')]), at('2024-01-01T00:00:00Z'))).toBeNull();
  });

  it('finds the opening later the same day and on later days (UTC)', () => {
    const c = cfg('UTC', [slot(MON, '09:00', '12:00'), slot(MON, '14:00', '17:00'), slot(TUE, '09:00', '10:00')]);
    expect(iso(nextSlotOpening(c, at('2024-01-01T07:00:00Z')))).toBe('2024-01-01T09:00:00.000Z');
    expect(iso(nextSlotOpening(c, at('2024-01-01T12:00:00Z')))).toBe('2024-01-01T14:00:00.000Z');
    expect(iso(nextSlotOpening(c, at('2024-01-01T17:00:00Z')))).toBe('2024-01-02T09:00:00.000Z');
  });

  it('wraps around the week', () => {
    const c = cfg('UTC', [slot(MON, '09:00', '09:15')]);
    expect(iso(nextSlotOpening(c, at('2024-01-01T09:15:00Z')))).toBe('2024-01-08T09:00:00.000Z');
    const sunday = cfg('UTC', [slot(SUN, '23:00', '24:00')]);
    expect(iso(nextSlotOpening(sunday, at('2024-01-08T00:00:00Z')))).toBe('2024-01-14T23:00:00.000Z');
    // Saturday night → Monday morning
    const weekdays = cfg('Asia/Kolkata', [0, 1, 2, 3, 4].map((d) => slot(d, '09:00', '18:00')));
    expect(iso(nextSlotOpening(weekdays, at('2024-01-06T20:00:00Z')))).toBe('2024-01-08T03:30:00.000Z');
  });

  it('finds the next day when a slot ends at 24:00 and the next starts at 00:00 (contiguous)', () => {
    const c = cfg('UTC', [slot(SAT, '22:00', '24:00'), slot(SUN, '00:00', '01:00')]);
    expect(isWithinSchedule(c, at('2024-01-07T00:00:00Z'))).toBe(true);
    expect(iso(nextSlotOpening(c, at('2024-01-06T21:00:00Z')))).toBe('2024-01-06T22:00:00.000Z');
    expect(iso(nextSlotOpening(c, at('2024-01-07T00:30:00Z')))).toBe('2024-01-07T00:30:00.000Z');
    expect(iso(nextSlotOpening(c, at('2024-01-07T01:00:00Z')))).toBe('2024-01-13T22:00:00.000Z');
  });

  it('crosses spring-forward in New York with the new offset', () => {
    const c = cfg('America/New_York', [slot(MON, '09:00', '17:00')]);
    // Saturday 2024-03-09 noon EST → Monday 2024-03-11 09:00 EDT = 13:00Z
    expect(iso(nextSlotOpening(c, at('2024-03-09T17:00:00Z')))).toBe('2024-03-11T13:00:00.000Z');
    // and fall-back: Saturday 2024-11-02 → Monday 2024-11-04 09:00 EST = 14:00Z
    expect(iso(nextSlotOpening(c, at('2024-11-02T16:00:00Z')))).toBe('2024-11-04T14:00:00.000Z');
  });

  it('opens a slot that starts inside a DST gap at the first instant after the gap', () => {
    // 2024-03-10 (Sunday): 02:00 EST → 03:00 EDT at 07:00Z
    const c = cfg('America/New_York', [slot(SUN, '02:30', '04:00')]);
    const r = nextSlotOpening(c, at('2024-03-09T12:00:00Z'));
    expect(iso(r)).toBe('2024-03-10T07:00:00.000Z');
    expect(isWithinSchedule(c, r!)).toBe(true);
    expect(isWithinSchedule(c, at('2024-03-10T06:59:59.999Z'))).toBe(false);
  });

  it('skips a slot lying wholly inside a DST gap that day', () => {
    const c = cfg('America/New_York', [slot(SUN, '02:00', '02:30')]);
    // next Sunday 02:00 EDT = 06:00Z
    expect(iso(nextSlotOpening(c, at('2024-03-09T12:00:00Z')))).toBe('2024-03-17T06:00:00.000Z');
  });

  it('returns the first occurrence in a fall-back overlap, then the second', () => {
    const c = cfg('America/New_York', [slot(SUN, '01:15', '01:45')]);
    expect(iso(nextSlotOpening(c, at('2024-11-02T12:00:00Z')))).toBe('2024-11-03T05:15:00.000Z');
    expect(iso(nextSlotOpening(c, at('2024-11-03T05:50:00Z')))).toBe('2024-11-03T06:15:00.000Z');
    expect(iso(nextSlotOpening(c, at('2024-11-03T06:45:00Z')))).toBe('2024-11-10T06:15:00.000Z');
  });

  it('re-enters a slot when the clock falls back into it', () => {
    // 00:30..01:30 on fall-back day: 04:30Z..05:30Z (EDT), out until 06:00Z, when the clock shows 01:00 EST again
    const c = cfg('America/New_York', [slot(SUN, '00:30', '01:30')]);
    expect(iso(nextSlotOpening(c, at('2024-11-03T05:30:00Z')))).toBe('2024-11-03T06:00:00.000Z');
    expect(isWithinSchedule(c, at('2024-11-03T06:29:59Z'))).toBe(true);
    expect(isWithinSchedule(c, at('2024-11-03T06:30:00Z'))).toBe(false);
  });

  it('handles Asia/Kolkata half-hour offset', () => {
    const c = cfg('Asia/Kolkata', [slot(MON, '09:00', '17:00')]);
    expect(iso(nextSlotOpening(c, at('2024-01-01T00:00:00Z')))).toBe('2024-01-01T03:30:00.000Z');
    expect(iso(nextSlotOpening(c, at('2024-01-01T11:30:00Z')))).toBe('2024-01-08T03:30:00.000Z');
  });

  it('handles Pacific/Chatham quarter-hour offsets and its DST gap at 02:45', () => {
    const monday = cfg('Pacific/Chatham', [slot(MON, '09:00', '17:00')]);
    // Monday 2024-07-01 09:00 +12:45 = 2024-06-30T20:15Z
    expect(iso(nextSlotOpening(monday, at('2024-06-29T00:00:00Z')))).toBe('2024-06-30T20:15:00.000Z');
    // Monday 2024-01-08 09:00 +13:45 = 2024-01-07T19:15Z
    expect(iso(nextSlotOpening(monday, at('2024-01-06T00:00:00Z')))).toBe('2024-01-07T19:15:00.000Z');
    // Sunday 2024-09-29: 02:45 → 03:45 at 2024-09-28T14:00Z; a 03:00..04:00 slot opens at 03:45
    const gap = cfg('Pacific/Chatham', [slot(SUN, '03:00', '04:00')]);
    expect(iso(nextSlotOpening(gap, at('2024-09-27T00:00:00Z')))).toBe('2024-09-28T14:00:00.000Z');
    expect(isWithinSchedule(gap, at('2024-09-28T14:14:59Z'))).toBe(true);
    expect(isWithinSchedule(gap, at('2024-09-28T14:15:00Z'))).toBe(false);
  });

  it('handles a DST gap at midnight (America/Santiago, 2024-09-08 00:00 → 01:00)', () => {
    const c = cfg('America/Santiago', [slot(SUN, '00:00', '06:00')]);
    expect(iso(nextSlotOpening(c, at('2024-09-07T16:00:00Z')))).toBe('2024-09-08T04:00:00.000Z');
    const sat = cfg('America/Santiago', [slot(SAT, '22:00', '24:00')]);
    expect(isWithinSchedule(sat, at('2024-09-08T03:59:59Z'))).toBe(true);
    expect(isWithinSchedule(sat, at('2024-09-08T04:00:00Z'))).toBe(false);
  });

  it('agrees with isWithinSchedule: the result is inside and nothing before it is (sampled)', () => {
    const zones = ['America/New_York', 'Asia/Kolkata', 'Pacific/Chatham', 'Europe/London', 'Australia/Lord_Howe'];
    const slots = [slot(MON, '08:30', '12:00'), slot(WED, '01:00', '03:30'), slot(SUN, '00:00', '02:50'), slot(SUN, '23:10', '24:00')];
    let seed = 12345;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (const zone of zones) {
      const c = cfg(zone, slots);
      for (let k = 0; k < 25; k++) {
        const after = new Date(Date.UTC(2024, 0, 1) + Math.floor(rand() * 366 * 86400_000));
        const r = nextSlotOpening(c, after)!;
        expect(r).not.toBeNull();
        expect(r.getTime()).toBeGreaterThanOrEqual(after.getTime());
        expect(isWithinSchedule(c, r)).toBe(true);
        if (r.getTime() > after.getTime()) {
          expect(isWithinSchedule(c, new Date(r.getTime() - 1))).toBe(false);
          expect(isWithinSchedule(c, after)).toBe(false);
          for (let t = after.getTime(); t < r.getTime(); t += 10 * 60_000) {
            if (isWithinSchedule(c, new Date(t))) throw new Error(`${zone}: inside at ${new Date(t).toISOString()} before ${r.toISOString()} (after ${after.toISOString()})`);
          }
        }
      }
    }
  });
});


describe('validateScheduleConfig', () => {
  const prefix = ['body', 'schedule_config'];
  it('accepts a valid config, with or without enabled/timezone', () => {
    expect(validateScheduleConfig({ enabled: true, timezone: 'Europe/Paris', slots: [slot(0, '09:00', '24:00')] }, prefix)).toEqual([]);
    expect(validateScheduleConfig({ slots: [slot(6, '00:00', '00:01')] }, prefix)).toEqual([]);
  });

  it('reports start >= end on end_time', () => {
    const issues = validateScheduleConfig({ slots: [slot(0, '10:00', '10:00'), slot(1, '11:00', '09:00')] }, prefix);
    expect(issues.map((i) => i.loc)).toEqual([
      ['body', 'schedule_config', 'slots', 0, 'end_time'],
      ['body', 'schedule_config', 'slots', 1, 'end_time'],
    ]);
    expect(issues[0].type).toBe('value_error');
  });

  it('reports bad HH:MM values', () => {
    const bad = ['9:00', '24:00', '12:60', '25:00', '1200', '12:00:00', ' 09:00', ''];
    bad.forEach((v) => {
      const issues = validateScheduleConfig({ slots: [slot(0, v, '23:00')] }, prefix);
      expect(issues).toEqual([
        { loc: ['body', 'schedule_config', 'slots', 0, 'start_time'], msg: expect.any(String), type: 'string_pattern_mismatch' },
      ]);
    });
    expect(validateScheduleConfig({ slots: [slot(0, '09:00', '24:01')] }, prefix)[0].loc).toEqual([
      'body', 'schedule_config', 'slots', 0, 'end_time',
    ]);
    expect(validateScheduleConfig({ slots: [{ day_of_week: 0, start_time: 900, end_time: '10:00' }] }, prefix)[0].type).toBe('string_type');
  });

  it('reports an unknown time zone', () => {
    expect(validateScheduleConfig({ timezone: 'Mars/Base', slots: [slot(0, '09:00', '10:00')] }, prefix)).toEqual([
      { loc: ['body', 'schedule_config', 'timezone'], msg: expect.stringContaining('Mars/Base'), type: 'value_error' },
    ]);
    expect(validateScheduleConfig({ timezone: 5, slots: [slot(0, '09:00', '10:00')] }, prefix)[0].type).toBe('string_type');
  });

  it('reports day_of_week out of range or not an integer', () => {
    const issues = validateScheduleConfig(
      { slots: [slot(7, '09:00', '10:00'), slot(-1, '09:00', '10:00'), slot(1.5, '09:00', '10:00'), { start_time: '09:00', end_time: '10:00' }] },
      prefix,
    );
    expect(issues.map((i) => [i.loc[3], i.type])).toEqual([
      [0, 'less_than_equal'],
      [1, 'greater_than_equal'],
      [2, 'int_type'],
      [3, 'missing'],
    ]);
  });

  it('reports the shape: not an object, slots missing, empty, too many, not a list; enabled not boolean', () => {
    expect(validateScheduleConfig('x', prefix)[0]).toMatchObject({ loc: prefix, type: 'dict_type' });
    expect(validateScheduleConfig({}, prefix)[0]).toMatchObject({ loc: [...prefix, 'slots'], type: 'missing' });
    expect(validateScheduleConfig({ slots: [] }, prefix)[0]).toMatchObject({ type: 'too_short' });
    expect(validateScheduleConfig({ slots: Array.from({ length: 51 }, () => slot(0, '09:00', '10:00')) }, prefix)[0]).toMatchObject({ type: 'too_long' });
    expect(validateScheduleConfig({ slots: {} }, prefix)[0]).toMatchObject({ type: 'list_type' });
    expect(validateScheduleConfig({ enabled: 'yes', slots: [slot(0, '09:00', '10:00')] }, prefix)[0]).toMatchObject({
      loc: [...prefix, 'enabled'],
      type: 'bool_type',
    });
    expect(validateScheduleConfig({ slots: [null] }, prefix)[0]).toMatchObject({ loc: [...prefix, 'slots', 0], type: 'dict_type' });
  });

  it('parseScheduleConfig applies defaults and throws every issue', () => {
    expect(parseScheduleConfig({ slots: [slot(0, '09:00', '10:00')] }, prefix)).toEqual({
      enabled: true,
      timezone: 'UTC',
      slots: [slot(0, '09:00', '10:00')],
    });
    expect(parseScheduleConfig({ enabled: false, timezone: 'america/new_york', slots: [slot(0, '09:00', '10:00')] }, prefix).timezone).toBe('America/New_York');
    expect(parseScheduleConfig({ timezone: 'Asia/Kolkata', slots: [slot(0, '09:00', '10:00')] }, prefix).timezone).toBe('Asia/Kolkata');
    try {
      parseScheduleConfig({ timezone: 'X/Y', slots: [slot(0, '10:00', '09:00')] }, prefix);
      throw new Error('expected a ValidationError');
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError);
      expect((e as ValidationError).issues).toHaveLength(2);
    }
  });
});

describe('parseWeekday', () => {
  it('reads full and 3-letter names in any case', () => {
    expect(parseWeekday('monday')).toBe(0);
    expect(parseWeekday('MON')).toBe(0);
    expect(parseWeekday(' Sunday ')).toBe(6);
    expect(parseWeekday('thu')).toBe(3);
    expect(parseWeekday('Wed')).toBe(2);
    expect(parseWeekday('tues')).toBeNull();
    expect(parseWeekday('mo')).toBeNull();
    expect(parseWeekday('funday')).toBeNull();
    expect(parseWeekday(1)).toBeNull();
  });
});

describe('convertTimeSlots', () => {
  it('converts the alias into an enabled schedule_config (UTC by default)', () => {
    expect(
      convertTimeSlots([
        { day: 'monday', start: '09:00', end: '17:00' },
        { day: 'SAT', start: '9:30', end: '24:00' },
      ]),
    ).toEqual({ enabled: true, timezone: 'UTC', slots: [slot(0, '09:00', '17:00'), slot(5, '09:30', '24:00')] });
    expect(convertTimeSlots([{ day: 'Friday', start: '08:00', end: '12:00' }], 'America/New_York')).toEqual({
      enabled: true,
      timezone: 'America/New_York',
      slots: [slot(4, '08:00', '12:00')],
    });
    expect(convertTimeSlots([{ day: 'fri', start: '08:00', end: '12:00' }], null).timezone).toBe('UTC');
  });

  function issuesOf(fn: () => unknown) {
    try {
      fn();
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError);
      return (e as ValidationError).issues;
    }
    throw new Error('expected a ValidationError');
  }

  it('reports bad days, times and order with loc body.time_slots.i.field', () => {
    const issues = issuesOf(() =>
      convertTimeSlots([
        { day: 'funday', start: '09:00', end: '17:00' },
        { day: 'tue', start: '9am', end: '17:00' },
        { day: 'wed', start: '18:00', end: '17:00' },
        { day: 'thu', start: '09:00', end: '24:30' },
        { start: '09:00', end: '10:00' },
      ]),
    );
    expect(issues.map((i) => i.loc)).toEqual([
      ['body', 'time_slots', 0, 'day'],
      ['body', 'time_slots', 1, 'start'],
      ['body', 'time_slots', 2, 'end'],
      ['body', 'time_slots', 3, 'end'],
      ['body', 'time_slots', 4, 'day'],
    ]);
    expect(issues[4].type).toBe('missing');
  });

  it('reports an unknown timezone on body.timezone and bad list shapes', () => {
    expect(issuesOf(() => convertTimeSlots([{ day: 'mon', start: '09:00', end: '10:00' }], 'Nope/Zone'))).toEqual([
      { loc: ['body', 'timezone'], msg: expect.any(String), type: 'value_error' },
    ]);
    expect(issuesOf(() => convertTimeSlots([]))[0]).toMatchObject({ loc: ['body', 'time_slots'], type: 'too_short' });
    expect(issuesOf(() => convertTimeSlots('monday'))[0]).toMatchObject({ loc: ['body', 'time_slots'], type: 'list_type' });
    expect(issuesOf(() => convertTimeSlots([42]))[0]).toMatchObject({ loc: ['body', 'time_slots', 0], type: 'dict_type' });
  });

  it('produces configs that validate', () => {
    const c = convertTimeSlots([{ day: 'sun', start: '00:00', end: '24:00' }], 'Pacific/Chatham');
    expect(validateScheduleConfig(c, ['body', 'schedule_config'])).toEqual([]);
  });
});
