import { describe, expect, it } from '@jest/globals';
import { ProviderApiError } from '../core/errors.js';
import {
  clampRingSeconds,
  configString,
  dropUndefined,
  formParams,
  headerValue,
  lastParam,
  requireCallerNumber,
  syncFailure,
  trimmedString,
  withPlus,
} from './sdk.js';

describe('provider helpers', () => {
  it('reads a header whatever its case, the first of a list, nothing from no headers', () => {
    expect(headerValue({ 'X-Twilio-Signature': 'abc' }, 'x-twilio-signature')).toBe('abc');
    expect(headerValue({ authorization: ['a', 'b'] } as unknown as Record<string, string>, 'authorization')).toBe('a');
    expect(headerValue(undefined, 'authorization')).toBeUndefined();
    expect(headerValue({ other: 'x' }, 'authorization')).toBeUndefined();
  });

  it('turns a form body into string parameters, skipping null, undefined and nested objects', () => {
    const params = formParams({ A: 1, B: ['x', 2], C: null, D: undefined, E: { f: 1 }, F: true });
    expect({ ...params }).toEqual({ A: '1', B: ['x', '2'], F: 'true' });
    expect({ ...formParams(['x'] as unknown as Record<string, unknown>) }).toEqual({});
    expect({ ...formParams(undefined) }).toEqual({});
  });

  it('takes the last value of a repeated parameter; empty is absent', () => {
    expect(lastParam(['a', 'b'])).toBe('b');
    expect(lastParam('a')).toBe('a');
    expect(lastParam('')).toBeUndefined();
    expect(lastParam(undefined)).toBeUndefined();
  });

  it('trims strings: blank or non-string JSON fields are absent, config fields become empty', () => {
    expect(trimmedString(' a ')).toBe('a');
    expect(trimmedString('  ')).toBeUndefined();
    expect(trimmedString(5)).toBeUndefined();
    expect(configString(' AC1 ')).toBe('AC1');
    expect(configString(5)).toBe('');
  });

  it('puts + back on E.164 digits only', () => {
    expect(withPlus('14155550100')).toBe('+14155550100');
    expect(withPlus('012345678')).toBe('012345678');
    expect(withPlus('sip:alice@example.com')).toBe('sip:alice@example.com');
    expect(withPlus('12345')).toBe('12345');
  });

  it('drops undefined keys in place and keeps null', () => {
    const o = { a: 1, b: undefined, c: null };
    expect(dropUndefined(o)).toBe(o);
    expect(Object.keys(o)).toEqual(['a', 'c']);
  });

  it('rounds and bounds the ring timeout', () => {
    expect(clampRingSeconds(2.4, 5, 600)).toBe(5);
    expect(clampRingSeconds(30.6, 5, 600)).toBe(31);
    expect(clampRingSeconds(1000, 5, 600)).toBe(600);
  });

  it('requires a caller number with a provider error that names the fix', () => {
    expect(requireCallerNumber('plivo', 'Plivo', '+14155550100')).toBe('+14155550100');
    expect(() => requireCallerNumber('plivo', 'Plivo', null)).toThrow(
      new ProviderApiError('plivo', 'Plivo needs a caller number: give the campaign or configuration a default caller phone number'),
    );
    try {
      requireCallerNumber('plivo', 'Plivo', '');
      throw new Error('not thrown');
    } catch (err) {
      expect(err).toBeInstanceOf(ProviderApiError);
      expect((err as ProviderApiError).provider).toBe('plivo');
      expect((err as ProviderApiError).retryable).toBe(false);
    }
  });

  it('reports a failed number sync with the provider error detail or as unreachable', () => {
    expect(syncFailure(new ProviderApiError('twilio', 'Twilio update failed (HTTP 400)'), 'Twilio')).toEqual({ ok: false, message: 'Twilio update failed (HTTP 400)' });
    expect(syncFailure(new Error('secret stack'), 'Twilio')).toEqual({ ok: false, message: 'Twilio could not be reached to update the number' });
  });
});
