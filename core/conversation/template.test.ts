import { describe, expect, it } from '@jest/globals';
import { renderTemplate, templateContextOf } from './template.js';

const now = new Date('2026-11-24T09:30:00Z'); // a Tuesday
const ctx = templateContextOf(
  { first_name: 'Dana', phone: '+15550100', tags: ['vip', 'new'], profile: { city: 'Lyon' }, zero: 0, no: false, blank: '' },
  { customer: { city: 'Paris' }, will_attend: true },
);
const r = (t: string): string => renderTemplate(t, ctx, now);

describe('renderTemplate', () => {
  it('renders top-level values and tolerates whitespace inside the braces', () => {
    expect(r('Hi {{first_name}}, {{  first_name  }}!')).toBe('Hi Dana, Dana!');
  });

  it('follows nested paths into the initial and gathered contexts', () => {
    expect(r('{{initial_context.phone}} {{gathered_context.customer.city}} {{profile.city}}')).toBe('+15550100 Paris Lyon');
    expect(r('{{gathered_context.will_attend}}')).toBe('true');
  });

  it('falls back from initial_context.x to the top-level x (flat contexts)', () => {
    expect(renderTemplate('{{initial_context.first_name}}', { first_name: 'Flat' }, now)).toBe('Flat');
  });

  it('uses a fallback when the value is missing, null or empty, in both spellings', () => {
    expect(r('{{nickname | Friend}} {{nickname|fallback:Buddy}} {{blank | none}} {{first_name | Friend}}')).toBe(
      'Friend Buddy none Dana',
    );
    expect(r('{{nickname | dear valued customer}}')).toBe('dear valued customer');
  });

  it('renders a missing value without fallback as empty, and a path through a non-object as missing', () => {
    expect(r('[{{nickname}}][{{first_name.length}}][{{gathered_context.customer.zip}}]')).toBe('[][][]');
  });

  it('renders numbers and booleans as text (0 and false are values, not missing) and objects/arrays as JSON', () => {
    expect(r('{{zero | x}} {{no | x}}')).toBe('0 false');
    expect(r('{{tags}} {{profile}}')).toBe('["vip","new"] {"city":"Lyon"}');
  });

  it('offers the time built-ins, in UTC and in an IANA zone; an unknown zone is missing', () => {
    expect(r('{{current_time}} {{current_weekday}}')).toBe('2026-11-24T09:30:00.000Z Tuesday');
    expect(r('{{current_time_Asia/Tokyo}} {{current_weekday_Asia/Tokyo}}')).toBe('2026-11-24 18:30 Tuesday');
    expect(r('[{{current_time_Not/AZone}}]')).toBe('[]');
    expect(renderTemplate('{{current_time}}', { current_time: 'context wins' }, now)).toBe('context wins');
  });

  it('leaves text without templates and malformed braces alone', () => {
    expect(r('no vars {single} {{}} done')).toBe('no vars {single}  done');
  });
});
