import { expect } from '@jest/globals';
import { ConflictError } from '../../core/errors.js';

/** Awaits `p`, expects it to reject with a `ConflictError`, and gives that error's code (for a contract to assert). */
export async function conflictCode(p: Promise<unknown>): Promise<string> {
  const e = await p.then(() => null, (err: unknown) => err);
  expect(e).toBeInstanceOf(ConflictError);
  return (e as ConflictError).code;
}
