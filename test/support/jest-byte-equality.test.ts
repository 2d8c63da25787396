import { beforeAll, describe, expect, it } from '@jest/globals';

// The setup file registers the tester; this file imports it only after checking that (importing it registers it).
const registered = () => ((globalThis as Record<symbol, { customEqualityTesters?: Array<{ name: string }> }>)[Symbol.for('$$jest-matchers-object')]
  ?.customEqualityTesters ?? []).map((t) => t.name);
const registeredBeforeImport = registered();
let integerArraysEqual: (a: unknown, b: unknown) => boolean | undefined;
beforeAll(async () => {
  ({ integerArraysEqual } = await import('./jest-byte-equality.js'));
});

describe('byte-wise equality of integer typed arrays in toEqual', () => {
  it('is registered for every test file by jest.config.js', () => {
    expect(registeredBeforeImport).toContain('integerArraysEqual');
  });

  it('answers for two integer arrays of one class, by their bytes, views into larger buffers included', () => {
    const big = Buffer.from([9, 1, 2, 3, 9]);
    expect(integerArraysEqual(big.subarray(1, 4), Buffer.from([1, 2, 3]))).toBe(true);
    expect(integerArraysEqual(Buffer.from([1, 2, 3]), Buffer.from([1, 2, 4]))).toBe(false);
    expect(integerArraysEqual(Buffer.from([1, 2, 3]), Buffer.from([1, 2]))).toBe(false);
    expect(integerArraysEqual(new Int16Array([1, -2]), new Int16Array([1, -2]))).toBe(true);
    expect(integerArraysEqual(new Int16Array([1, -2]), new Int16Array([1, 2]))).toBe(false);
  });

  it('leaves other pairs to jest: different classes, float arrays, anything else', () => {
    expect(integerArraysEqual(Buffer.from([1]), new Uint8Array([1]))).toBeUndefined();
    expect(integerArraysEqual(new Float32Array([Number.NaN]), new Float32Array([Number.NaN]))).toBeUndefined();
    expect(integerArraysEqual(new Uint8Array([1]), [1])).toBeUndefined();
    expect(integerArraysEqual('a', 'a')).toBeUndefined();
    // and jest's answers for them stand
    expect(Buffer.from([1, 2])).toEqual(new Uint8Array([1, 2]));
    expect(new Float32Array([Number.NaN, -0])).not.toEqual(new Float32Array([Number.NaN, 0]));
  });

  it('keeps toEqual failing on a differing byte, in a large buffer and nested in an object', () => {
    const a = Buffer.alloc(100_000, 7);
    const b = Buffer.from(a);
    expect(a).toEqual(b);
    b[99_999] = 8;
    expect(a).not.toEqual(b);
    expect({ audio: a, n: 1 }).not.toEqual({ audio: b, n: 1 });
    // a failing toEqual still throws (small arrays: jest's diff of a large one takes seconds)
    expect(() => expect({ audio: Buffer.from([1, 2]) }).toEqual({ audio: Buffer.from([1, 3]) })).toThrow();
    expect(() => expect([new Int16Array([1, 2])]).toStrictEqual([new Int16Array([1, 3])])).toThrow();
    expect({ audio: a.subarray(0, 10) }).toStrictEqual({ audio: Buffer.alloc(10, 7) });
  });
});
