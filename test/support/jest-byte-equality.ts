/**
 * jest setup (jest.config.js `setupFilesAfterEnv`): `toEqual` / `toStrictEqual` compare two integer typed arrays of
 * the same class (Buffer, Uint8Array, Int16Array, ...) by their bytes. jest's own comparison walks them element by
 * element through its generic equality, about 5 ms per kilobyte here: a 100 KB recording compared once took half a
 * second (http/routes/files.routes.test.ts compared ten). For integer elements equal bytes are exactly equal
 * elements, so what passes and fails is unchanged, and a failure prints jest's usual diff. Other pairs (different
 * classes, float arrays, where NaN and -0 make bytes and values disagree) are left to jest.
 */
import { expect } from '@jest/globals';

const INTEGER_ARRAYS = [Uint8Array, Uint8ClampedArray, Int8Array, Uint16Array, Int16Array, Uint32Array, Int32Array, BigUint64Array, BigInt64Array];

function bytesOf(view: ArrayBufferView): Buffer {
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength);
}

/** true / false for two integer typed arrays of one class, undefined (jest decides) for anything else. */
export function integerArraysEqual(a: unknown, b: unknown): boolean | undefined {
  if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(b) || a instanceof DataView || b instanceof DataView) return undefined;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return undefined;
  if (!INTEGER_ARRAYS.some((C) => a instanceof C)) return undefined;
  return a.byteLength === b.byteLength && bytesOf(a).equals(bytesOf(b));
}

expect.addEqualityTesters([integerArraysEqual]);
