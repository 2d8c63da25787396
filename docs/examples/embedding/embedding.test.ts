import { describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { runIdentityRepositoryContract } from 'callplane/testing';
import { distFile, freePort } from '../../../test/support/process.js';
import { spawn } from 'node:child_process';
import { MemoryIdentityRepository } from './memory-identity.repository.js';
import { createEmbeddedServer } from './service.js';

// The embedder's own adapter passes the same contract as the built-in SQLite and MongoDB adapters.
runIdentityRepositoryContract('embedding example (memory)', async () => ({ repo: new MemoryIdentityRepository(), cleanup: async () => {} }));

async function flow(base: string) {
  const signup = await fetch(`${base}/signup`, { method: 'POST', body: JSON.stringify({ email: 'emb@example.com', password: 'long enough' }) });
  expect(signup.status).toBe(200);
  const { token, organization_id } = (await signup.json()) as { token: string; organization_id: number };
  const key = await fetch(`${base}/keys`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  expect(key.status).toBe(200);
  const { api_key } = (await key.json()) as { api_key: string };
  expect(api_key).toMatch(/^cpk_/);
  const who = await fetch(`${base}/whoami`, { headers: { 'x-api-key': api_key } });
  expect(await who.json()).toMatchObject({ organizationId: organization_id, via: 'api_key' });
  const refused = await fetch(`${base}/keys`, { method: 'POST', headers: { 'x-api-key': api_key } });
  expect(refused.status).toBe(403);
  expect((await fetch(`${base}/whoami`, { headers: { 'x-api-key': 'cpk_wrong' } })).status).toBe(401);
}

describe('embedding example (docs/embedding.md)', () => {
  it('runs in process', async () => {
    const server = createEmbeddedServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      await flow(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    } finally {
      server.close();
    }
  });

  it('builds and runs as its own process importing callplane/core by package name', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [distFile('docs/examples/embedding/main.js')], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d) => String(d).includes('listening') && resolve());
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
      });
      await flow(`http://127.0.0.1:${port}`);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
