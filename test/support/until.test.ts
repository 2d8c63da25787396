import { describe, expect, it } from '@jest/globals';
import { until } from './until.js';

describe('until', () => {
  it('resolves once the condition holds (sync or async), and names what it waited for when it times out', async () => {
    let n = 0;
    await until('three polls', () => ++n >= 3, 1000, 1);
    expect(n).toBe(3);
    await until('an async answer', async () => true);
    await expect(until('never', () => false, 20, 1)).rejects.toThrow('timed out waiting for never');
  });
});
