import { describe, expect, it } from '@jest/globals';
import { abortError } from './abort-error.js';

describe('abortError', () => {
  it('keeps the caller\'s AbortError (any realm: by name), else makes one', () => {
    const own = new DOMException('stopped by the caller', 'AbortError');
    expect(abortError(own)).toBe(own);
    const foreign = { name: 'AbortError', message: 'from another realm' };
    expect(abortError(foreign)).toBe(foreign);
    for (const reason of [undefined, 'timeout', new Error('boom'), new DOMException('late', 'TimeoutError')]) {
      expect(abortError(reason)).toMatchObject({ name: 'AbortError', message: 'The operation was aborted' });
    }
  });
});
