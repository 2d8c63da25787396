import { describe, expect, it } from '@jest/globals';
import { byteRangeOf } from './byte-range.js';

describe('byteRangeOf (RFC 9110 single byte ranges)', () => {
  const size = 1000;
  it.each([
    ['bytes=0-99', { kind: 'partial', start: 0, end: 99 }],
    ['bytes=500-', { kind: 'partial', start: 500, end: 999 }],
    ['bytes=999-999', { kind: 'partial', start: 999, end: 999 }],
    ['bytes=900-5000', { kind: 'partial', start: 900, end: 999 }],
    ['bytes=-100', { kind: 'partial', start: 900, end: 999 }],
    ['bytes=-5000', { kind: 'partial', start: 0, end: 999 }],
    ['BYTES = 1-2 ', { kind: 'partial', start: 1, end: 2 }],
    ['bytes=1000-', { kind: 'unsatisfiable' }],
    ['bytes=1000-2000', { kind: 'unsatisfiable' }],
    ['bytes=99999999999999999999-', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    [undefined, { kind: 'full' }],
    ['', { kind: 'full' }],
    ['bytes=', { kind: 'full' }],
    ['bytes=-', { kind: 'full' }],
    ['bytes=5-4', { kind: 'full' }],
    ['bytes=0-1,5-6', { kind: 'full' }],
    ['bytes=a-b', { kind: 'full' }],
    ['bytes=-1-2', { kind: 'full' }],
    ['items=0-1', { kind: 'full' }],
  ])('%p → %p', (header, answer) => {
    expect(byteRangeOf(header, size)).toEqual(answer);
  });

  it('has no bytes to give from an empty representation', () => {
    expect(byteRangeOf('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
    expect(byteRangeOf('bytes=-1', 0)).toEqual({ kind: 'unsatisfiable' });
    expect(byteRangeOf(undefined, 0)).toEqual({ kind: 'full' });
  });
});
