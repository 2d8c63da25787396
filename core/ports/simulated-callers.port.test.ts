import { describe, expect, it } from '@jest/globals';
import { CALLER_SCRIPT_LIMITS, parseCallerScript } from './simulated-callers.port.js';

describe('parseCallerScript', () => {
  it('reads lines and a persona; absent is null', () => {
    expect(parseCallerScript(undefined)).toBeNull();
    expect(parseCallerScript(null)).toBeNull();
    expect(parseCallerScript({ lines: ['Yes.', 'Bye.'] })).toEqual({ lines: ['Yes.', 'Bye.'] });
    expect(parseCallerScript({ persona: 'A busy nurse' })).toEqual({ lines: [], persona: 'A busy nurse' });
  });

  it.each([
    ['not an object', 'yes'],
    ['a list', ['a']],
    ['lines not a list', { lines: 'hello' }],
    ['a blank line', { lines: ['ok', '  '] }],
    ['a line that is not text', { lines: [3] }],
    ['a too long line', { lines: ['x'.repeat(CALLER_SCRIPT_LIMITS.maxLineLength + 1)] }],
    ['too many lines', { lines: Array.from({ length: CALLER_SCRIPT_LIMITS.maxLines + 1 }, () => 'a') }],
    ['a blank persona', { lines: ['a'], persona: ' ' }],
    ['nothing to say', { lines: [] }],
  ])('refuses %s with a reason', (_what, value) => {
    expect(parseCallerScript(value)).toEqual({ error: expect.stringContaining('caller') });
  });
});
