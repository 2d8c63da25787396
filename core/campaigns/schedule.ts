/**
 * Campaign calling windows (API.md section 6, `schedule_config`): weekly slots of wall-clock time in one IANA
 * time zone. Pure core: time-zone arithmetic goes through the runtime's `Intl.DateTimeFormat` only.
 *
 * Semantics, decided here:
 * - A slot `{day_of_week, start_time, end_time}` covers the wall-clock times `[start, end)` of every local day
 *   whose weekday is `day_of_week` (0 = Monday .. 6 = Sunday). `end_time` may be `"24:00"` (end of that day).
 *   Slots may overlap or touch; the schedule is their union.
 * - An instant is inside the schedule when the zone's wall clock at that instant shows a covered time.
 *   Consequences at daylight-saving transitions:
 *   - gap (spring forward, e.g. 02:00 → 03:00): a slot starting inside the gap opens at the first instant
 *     after it (wall clock 03:00, when that is still before the slot's end); a slot lying wholly inside the
 *     gap does not occur that day.
 *   - overlap (fall back, e.g. 02:00 → 01:00): wall times in the repeated hour occur twice, so a slot
 *     covering them is open during both occurrences; `nextSlotOpening` returns the first.
 * - No config, or `enabled: false`: every instant is inside (calls may be placed at any time).
 * - `enabled: true` with no slots: no instant is inside.
 */
import { ValidationError, type ValidationIssue } from '../errors.js';

/** 0 = Monday .. 6 = Sunday. */
export type DayOfWeek = 0 | 1 | 2 | 3 | 4 | 5 | 6;

export interface ScheduleSlot {
  /** 0 = Monday .. 6 = Sunday. */
  day_of_week: number;
  /** `HH:MM`, 00:00..23:59. */
  start_time: string;
  /** `HH:MM` or `"24:00"`; exclusive; after `start_time`. */
  end_time: string;
}

export interface ScheduleConfig {
  enabled: boolean;
  /** IANA time-zone name, e.g. `Europe/Paris`; applies to every slot. */
  timezone: string;
  slots: ScheduleSlot[];
}

/** One item of the `time_slots` alias (API.md section 6). */
export interface TimeSlotAlias {
  day: string;
  start: string;
  end: string;
}

export const DEFAULT_SCHEDULE_TIMEZONE = 'UTC';
export const MAX_SCHEDULE_SLOTS = 50;

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

// ---------------------------------------------------------------------------------------------------------
// Time zones
// ---------------------------------------------------------------------------------------------------------

const formatters = new Map<string, Intl.DateTimeFormat>();

/** An IANA-looking name: letters first, then letters, digits, `_`, `+`, `-`, `/`. Rejects offsets like `+05:30`. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+\-/]*$/;

function formatterFor(timeZone: string): Intl.DateTimeFormat | null {
  const cached = formatters.get(timeZone);
  if (cached) return cached;
  if (!ZONE_NAME.test(timeZone)) return null;
  let formatter: Intl.DateTimeFormat;
  try {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      era: 'short',
    });
  } catch {
    return null;
  }
  formatters.set(timeZone, formatter);
  return formatter;
}

/**
 * True when the runtime knows `timeZone` as an IANA zone name (matched case-insensitively, as `Intl` does;
 * links such as `Asia/Calcutta` count). Offsets (`+05:30`) and empty strings are not zone names.
 */
export function isValidTimeZone(timeZone: unknown): timeZone is string {
  return typeof timeZone === 'string' && formatterFor(timeZone) !== null;
}

let zoneSpellings: Map<string, string> | null = null;

/**
 * The usual spelling of a valid zone name when the caller's differs only in case (`america/new_york` →
 * `America/New_York`); otherwise the name as given. Links stay links (`Asia/Kolkata` is not turned into the
 * runtime's `Asia/Calcutta`). Throws RangeError for an unknown zone.
 */
export function canonicalTimeZone(timeZone: string): string {
  const formatter = requireFormatter(timeZone);
  const resolved = formatter.resolvedOptions().timeZone;
  if (resolved === timeZone) return timeZone;
  const lower = timeZone.toLowerCase();
  if (resolved.toLowerCase() === lower) return resolved;
  if (!zoneSpellings) {
    zoneSpellings = new Map();
    for (const name of Intl.supportedValuesOf('timeZone')) zoneSpellings.set(name.toLowerCase(), name);
    zoneSpellings.set('utc', 'UTC');
  }
  return zoneSpellings.get(lower) ?? timeZone;
}

function requireFormatter(timeZone: string): Intl.DateTimeFormat {
  const formatter = formatterFor(timeZone);
  if (!formatter) throw new RangeError(`unknown time zone: ${timeZone}`);
  return formatter;
}

/** Milliseconds since the epoch of a proleptic-Gregorian UTC date-time (years below 100 included). */
function utcMs(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

/**
 * The zone's offset from UTC at `instantMs`, in ms (wall clock = instant + offset). Whole seconds: the
 * instant is floored to its second before formatting, which `Intl` would do anyway.
 */
export function zoneOffsetMs(timeZone: string, instantMs: number): number {
  const formatter = requireFormatter(timeZone);
  const second = Math.floor(instantMs / 1000) * 1000;
  let year = 0;
  let month = 1;
  let day = 1;
  let hour = 0;
  let minute = 0;
  let sec = 0;
  let bc = false;
  for (const part of formatter.formatToParts(second)) {
    switch (part.type) {
      case 'year':
        year = Number(part.value);
        break;
      case 'month':
        month = Number(part.value);
        break;
      case 'day':
        day = Number(part.value);
        break;
      case 'hour':
        hour = Number(part.value) % 24;
        break;
      case 'minute':
        minute = Number(part.value);
        break;
      case 'second':
        sec = Number(part.value);
        break;
      case 'era':
        bc = part.value.startsWith('B');
        break;
      default:
        break;
    }
  }
  if (bc) year = 1 - year;
  return utcMs(year, month, day, hour, minute, sec) - second;
}

/** Wall-clock time of `instantMs` in the zone, as a pseudo-UTC millisecond count. */
function wallMs(timeZone: string, instantMs: number): number {
  return instantMs + zoneOffsetMs(timeZone, instantMs);
}

/** 0 = Monday .. 6 = Sunday of a pseudo-UTC wall time. */
function weekdayOf(wall: number): number {
  return (new Date(wall).getUTCDay() + 6) % 7;
}

// ---------------------------------------------------------------------------------------------------------
// Slots
// ---------------------------------------------------------------------------------------------------------

const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Minutes since midnight of `HH:MM` (`"24:00"` → 1440 when `allowEndOfDay`), or null when malformed. */
export function parseClockTime(value: unknown, allowEndOfDay = false): number | null {
  if (typeof value !== 'string') return null;
  if (allowEndOfDay && value === '24:00') return 24 * 60;
  const match = HH_MM.exec(value);
  if (!match) return null;
  return Number(match[1]) * 60 + Number(match[2]);
}

interface CompiledSlot {
  day: number;
  startMin: number;
  endMin: number;
}

/** Well-formed slots only; a malformed one (which validation refuses) covers nothing. */
function compileSlots(config: ScheduleConfig): CompiledSlot[] {
  const compiled: CompiledSlot[] = [];
  for (const slot of config.slots ?? []) {
    const startMin = parseClockTime(slot.start_time);
    const endMin = parseClockTime(slot.end_time, true);
    if (startMin === null || endMin === null || startMin >= endMin) continue;
    if (!Number.isInteger(slot.day_of_week) || slot.day_of_week < 0 || slot.day_of_week > 6) continue;
    compiled.push({ day: slot.day_of_week, startMin, endMin });
  }
  return compiled;
}

/**
 * True when calls may start at `at`: no config, `enabled: false`, or the zone's wall clock at `at` is inside
 * a slot (start inclusive, end exclusive). Throws RangeError for an unknown time zone (validation refuses it
 * earlier).
 */
export function isWithinSchedule(config: ScheduleConfig | null | undefined, at: Date): boolean {
  if (!config || !config.enabled) return true;
  const wall = wallMs(config.timezone, at.getTime());
  const dayStart = Math.floor(wall / DAY_MS) * DAY_MS;
  const minuteOfDay = (wall - dayStart) / MINUTE_MS;
  const weekday = weekdayOf(dayStart);
  return compileSlots(config).some((s) => s.day === weekday && s.startMin <= minuteOfDay && minuteOfDay < s.endMin);
}

/** A stretch of instants `[from, to)` over which the zone's offset is constant. */
interface Segment {
  from: number;
  to: number;
  offset: number;
}

/** The first instant in `(lo, hi]` whose offset differs from the offset at `lo` (offsets change on whole seconds). */
function findTransition(timeZone: string, lo: number, hi: number, offsetAtLo: number): number {
  let a = lo;
  let b = hi;
  while (b - a > 1000) {
    const mid = a + Math.floor((b - a) / 2000) * 1000;
    if (zoneOffsetMs(timeZone, mid) === offsetAtLo) a = mid;
    else b = mid;
  }
  return b;
}

const SAMPLE_STEP_MS = 3 * HOUR_MS;

/** Constant-offset segments covering `[from, to)`; transitions are found by sampling every 3 h, then bisecting. */
function segmentsBetween(timeZone: string, from: number, to: number): Segment[] {
  const segments: Segment[] = [];
  let segStart = from;
  let offset = zoneOffsetMs(timeZone, from);
  let probe = from;
  while (probe < to) {
    const next = Math.min(probe + SAMPLE_STEP_MS, to);
    const nextOffset = zoneOffsetMs(timeZone, next);
    if (nextOffset !== offset) {
      // One transition per 3 h at most (true of every zone in the tz database).
      const at = findTransition(timeZone, probe, next, offset);
      segments.push({ from: segStart, to: at, offset });
      segStart = at;
      offset = zoneOffsetMs(timeZone, at);
    }
    probe = next;
  }
  segments.push({ from: segStart, to, offset });
  return segments;
}

/** Zone offsets stay within -12 h .. +14 h; 16 h of margin covers them with room to spare. */
const OFFSET_MARGIN_MS = 16 * HOUR_MS;
/** Local days searched: two weeks plus a week of room for zones that skipped a day or a slot lost to a gap. */
const SEARCH_DAYS = 22;

/**
 * The earliest instant `>= after` at which calls may start, i.e. the earliest instant inside the schedule:
 * `after` itself when it is already inside a slot (or there is no schedule / it is disabled), otherwise the
 * next slot opening. DST-correct (see the module doc for gaps and overlaps). Null when no slot ever opens
 * (enabled with no usable slot). Never throws for a valid config; RangeError for an unknown time zone.
 */
export function nextSlotOpening(config: ScheduleConfig | null | undefined, after: Date): Date | null {
  if (!config || !config.enabled) return new Date(after.getTime());
  const slots = compileSlots(config);
  if (slots.length === 0) return null;
  const zone = config.timezone;
  const afterMs = after.getTime();

  // Local days from the one before `after`'s wall date (an overlap can put instants >= after on it).
  const firstDay = Math.floor(wallMs(zone, afterMs) / DAY_MS) * DAY_MS - DAY_MS;
  let best: number | null = null;
  let bestDayIndex = Infinity;
  for (let i = 0; i < SEARCH_DAYS && i <= bestDayIndex + 1; i++) {
    const dayStart = firstDay + i * DAY_MS;
    const weekday = weekdayOf(dayStart);
    const todays = slots.filter((s) => s.day === weekday);
    if (todays.length === 0) continue;
    const segments = segmentsBetween(zone, dayStart - OFFSET_MARGIN_MS, dayStart + DAY_MS + OFFSET_MARGIN_MS);
    for (const slot of todays) {
      const wallFrom = dayStart + slot.startMin * MINUTE_MS;
      const wallTo = dayStart + slot.endMin * MINUTE_MS;
      for (const seg of segments) {
        // Instants of this segment whose wall clock falls in [wallFrom, wallTo).
        const open = Math.max(seg.from, wallFrom - seg.offset, afterMs);
        const close = Math.min(seg.to, wallTo - seg.offset);
        if (open < close && (best === null || open < best)) {
          best = open;
          bestDayIndex = Math.min(bestDayIndex, i);
        }
      }
    }
  }
  return best === null ? null : new Date(best);
}

// ---------------------------------------------------------------------------------------------------------
// Validation and the `time_slots` alias
// ---------------------------------------------------------------------------------------------------------

type Loc = (string | number)[];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks a `schedule_config` value (already JSON) and returns every problem as FastAPI-shaped issues whose
 * `loc` starts with `locPrefix` (e.g. `['body','schedule_config']`); an empty array when it is valid.
 * Missing `enabled` and `timezone` are fine (defaults true and UTC). Never throws.
 */
export function validateScheduleConfig(config: unknown, locPrefix: Loc): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (!isRecord(config)) {
    issues.push({ loc: [...locPrefix], msg: 'Input should be a valid dictionary', type: 'dict_type' });
    return issues;
  }
  if (config.enabled !== undefined && typeof config.enabled !== 'boolean') {
    issues.push({ loc: [...locPrefix, 'enabled'], msg: 'Input should be a valid boolean', type: 'bool_type' });
  }
  if (config.timezone !== undefined) {
    if (typeof config.timezone !== 'string') {
      issues.push({ loc: [...locPrefix, 'timezone'], msg: 'Input should be a valid string', type: 'string_type' });
    } else if (!isValidTimeZone(config.timezone)) {
      issues.push({
        loc: [...locPrefix, 'timezone'],
        msg: `Value error, unknown IANA time zone: ${JSON.stringify(config.timezone)}`,
        type: 'value_error',
      });
    }
  }
  const slots = config.slots;
  if (slots === undefined) {
    issues.push({ loc: [...locPrefix, 'slots'], msg: 'Field required', type: 'missing' });
  } else if (!Array.isArray(slots)) {
    issues.push({ loc: [...locPrefix, 'slots'], msg: 'Input should be a valid list', type: 'list_type' });
  } else if (slots.length < 1) {
    issues.push({
      loc: [...locPrefix, 'slots'],
      msg: 'List should have at least 1 item after validation, not 0',
      type: 'too_short',
    });
  } else if (slots.length > MAX_SCHEDULE_SLOTS) {
    issues.push({
      loc: [...locPrefix, 'slots'],
      msg: `List should have at most ${MAX_SCHEDULE_SLOTS} items after validation, not ${slots.length}`,
      type: 'too_long',
    });
  } else {
    slots.forEach((slot, i) => issues.push(...validateSlot(slot, [...locPrefix, 'slots', i])));
  }
  return issues;
}

function validateSlot(slot: unknown, loc: Loc): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (!isRecord(slot)) {
    return [{ loc, msg: 'Input should be a valid dictionary', type: 'dict_type' }];
  }
  const day = slot.day_of_week;
  if (day === undefined) {
    issues.push({ loc: [...loc, 'day_of_week'], msg: 'Field required', type: 'missing' });
  } else if (typeof day !== 'number' || !Number.isInteger(day)) {
    issues.push({ loc: [...loc, 'day_of_week'], msg: 'Input should be a valid integer', type: 'int_type' });
  } else if (day < 0) {
    issues.push({ loc: [...loc, 'day_of_week'], msg: 'Input should be greater than or equal to 0', type: 'greater_than_equal' });
  } else if (day > 6) {
    issues.push({ loc: [...loc, 'day_of_week'], msg: 'Input should be less than or equal to 6', type: 'less_than_equal' });
  }
  const start = checkClock(slot.start_time, false, [...loc, 'start_time'], issues);
  const end = checkClock(slot.end_time, true, [...loc, 'end_time'], issues);
  if (start !== null && end !== null && start >= end) {
    issues.push({
      loc: [...loc, 'end_time'],
      msg: 'Value error, end_time must be after start_time',
      type: 'value_error',
    });
  }
  return issues;
}

function checkClock(value: unknown, isEnd: boolean, loc: Loc, issues: ValidationIssue[]): number | null {
  if (value === undefined) {
    issues.push({ loc, msg: 'Field required', type: 'missing' });
    return null;
  }
  if (typeof value !== 'string') {
    issues.push({ loc, msg: 'Input should be a valid string', type: 'string_type' });
    return null;
  }
  const minutes = parseClockTime(value, isEnd);
  if (minutes === null) {
    issues.push({
      loc,
      msg: isEnd
        ? 'String should match pattern HH:MM (00:00..23:59) or 24:00'
        : 'String should match pattern HH:MM (00:00..23:59)',
      type: 'string_pattern_mismatch',
    });
  }
  return minutes;
}

/**
 * Validates a `schedule_config` value and returns it with defaults applied (`enabled` true, `timezone` UTC),
 * the zone spelled as `canonicalTimeZone` returns it. Throws ValidationError (every issue, `loc` under `locPrefix`).
 */
export function parseScheduleConfig(config: unknown, locPrefix: Loc): ScheduleConfig {
  const issues = validateScheduleConfig(config, locPrefix);
  if (issues.length > 0) throw new ValidationError(issues);
  const value = config as Partial<ScheduleConfig> & { slots: ScheduleSlot[] };
  return {
    enabled: value.enabled ?? true,
    timezone: canonicalTimeZone(value.timezone ?? DEFAULT_SCHEDULE_TIMEZONE),
    slots: value.slots.map((s) => ({ day_of_week: s.day_of_week, start_time: s.start_time, end_time: s.end_time })),
  };
}

/** Weekday name → 0 (Monday) .. 6 (Sunday); full names and 3-letter forms, case-insensitive, trimmed. */
export function parseWeekday(name: unknown): number | null {
  if (typeof name !== 'string') return null;
  const key = name.trim().toLowerCase();
  if (key.length < 3) return null;
  const index = WEEKDAYS.findIndex((day) => day === key || (key.length === 3 && day.startsWith(key)));
  return index === -1 ? null : index;
}

/** `H:MM` or `HH:MM` → `HH:MM` (the alias is lenient about the leading zero); otherwise unchanged. */
function padClock(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const trimmed = value.trim();
  return /^\d:\d\d$/.test(trimmed) ? `0${trimmed}` : trimmed;
}

/**
 * Converts the top-level `time_slots` alias (with its optional top-level `timezone`, default UTC) into a
 * `schedule_config` (`enabled: true`). Weekday names: `monday`..`sunday` or `mon`..`sun`, any case. Times:
 * `HH:MM` (a single-digit hour is accepted), `end` may be `24:00`. Throws ValidationError with every issue,
 * `loc` `['body','time_slots',i,'day'|'start'|'end']` or `['body','timezone']`.
 */
export function convertTimeSlots(timeSlots: unknown, timezone?: string | null): ScheduleConfig {
  const issues: ValidationIssue[] = [];
  const zone = timezone ?? DEFAULT_SCHEDULE_TIMEZONE;
  if (!isValidTimeZone(zone)) {
    issues.push({
      loc: ['body', 'timezone'],
      msg: `Value error, unknown IANA time zone: ${JSON.stringify(zone)}`,
      type: 'value_error',
    });
  }
  const slots: ScheduleSlot[] = [];
  if (!Array.isArray(timeSlots)) {
    issues.push({ loc: ['body', 'time_slots'], msg: 'Input should be a valid list', type: 'list_type' });
  } else if (timeSlots.length < 1 || timeSlots.length > MAX_SCHEDULE_SLOTS) {
    issues.push({
      loc: ['body', 'time_slots'],
      msg:
        timeSlots.length < 1
          ? 'List should have at least 1 item after validation, not 0'
          : `List should have at most ${MAX_SCHEDULE_SLOTS} items after validation, not ${timeSlots.length}`,
      type: timeSlots.length < 1 ? 'too_short' : 'too_long',
    });
  } else {
    timeSlots.forEach((item: unknown, i) => {
      const loc: Loc = ['body', 'time_slots', i];
      if (!isRecord(item)) {
        issues.push({ loc, msg: 'Input should be a valid dictionary', type: 'dict_type' });
        return;
      }
      let day: number | null = null;
      if (item.day === undefined) {
        issues.push({ loc: [...loc, 'day'], msg: 'Field required', type: 'missing' });
      } else {
        day = parseWeekday(item.day);
        if (day === null) {
          issues.push({
            loc: [...loc, 'day'],
            msg: 'Input should be a weekday name: monday..sunday or mon..sun',
            type: 'enum',
          });
        }
      }
      const startText = padClock(item.start);
      const endText = padClock(item.end);
      const start = checkClock(startText, false, [...loc, 'start'], issues);
      const end = checkClock(endText, true, [...loc, 'end'], issues);
      if (start !== null && end !== null && start >= end) {
        issues.push({ loc: [...loc, 'end'], msg: 'Value error, end must be after start', type: 'value_error' });
      }
      if (day !== null && start !== null && end !== null && start < end) {
        slots.push({ day_of_week: day, start_time: startText as string, end_time: endText as string });
      }
    });
  }
  if (issues.length > 0) throw new ValidationError(issues);
  return { enabled: true, timezone: canonicalTimeZone(zone), slots };
}
