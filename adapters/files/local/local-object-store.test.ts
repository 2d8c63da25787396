import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runObjectStoreContract } from '../../../test/contracts/object-store.contract.js';
import { LocalObjectStore } from './local-object-store.js';

const signer = { sign: () => 'sig', verify: () => true };
const clock = { now: () => new Date('2026-01-01T00:00:00Z') };

runObjectStoreContract('local files', async () => {
  const root = mkdtempSync(join(tmpdir(), 'callplane-objects-'));
  return {
    store: new LocalObjectStore(join(root, 'files'), 'http://localhost', signer, clock),
    cleanup: async () => rmSync(root, { recursive: true, force: true }),
  };
});
