/**
 * The built service as a process (needs `npm run build`): a stored ARI configuration whose endpoint redirects
 * used to end the process at every start (ari-client threw `cb.redirect is not a function` outside any
 * handler, and configurations reconnect at start-up). Now the configuration is unhealthy with a clear message
 * in the log and the service keeps serving, across restarts.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiClient } from '../../test/e2e/campaign-support.js';
import { FakeAriServer } from '../../test/fakes/ari/fake-ari-server.js';
import { spawnService, type SpawnedService } from '../../test/support/process.js';

const REDIRECT_MESSAGE = /ARI endpoint answered a redirect \(302\) to http:\/\/169\.254\.169\.254\/latest\/meta-data\/; redirects are not followed/;

async function logged(svc: SpawnedService, pattern: RegExp, ms = 10_000): Promise<void> {
  const start = Date.now();
  while (!pattern.test(svc.stdout.join(''))) {
    if (Date.now() - start > ms) throw new Error(`not logged: ${pattern}\nstdout: ${svc.stdout.join('')}\nstderr: ${svc.stderr.join('')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a redirecting ARI endpoint and the service process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'callplane-ari-crash-'));
  let fake: FakeAriServer | undefined;
  let svc: SpawnedService | undefined;
  afterAll(async () => {
    svc?.child.kill('SIGKILL');
    await fake?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps serving: the configuration is unhealthy with a clear message, before and after a restart', async () => {
    fake = await FakeAriServer.start({ username: 'callplane', password: 'pw' });
    // the first api-docs request (our preflight) is served, ari-client's own requests are redirected
    fake.redirectApiDocs = { location: 'http://169.254.169.254/latest/meta-data/', after: 1 };
    svc = await spawnService({ CALLPLANE_DATA_DIR: dataDir, CALLPLANE_ALLOW_PRIVATE_NETWORK: 'true' });
    const api = apiClient(svc.url);
    const signup = await api.post('/auth/signup', { email: 'ari@example.com', password: 'correct horse battery' });
    expect(signup.status).toBe(200);
    const auth = { token: signup.body.token as string };
    const cfg = await api.post('/organizations/telephony-configs', {
      name: 'Asterisk', config: { provider: 'ari', ari_endpoint: fake.url, app_name: 'callplane', app_password: 'pw' },
    }, auth);
    expect(cfg.status).toBe(200);
    await logged(svc, REDIRECT_MESSAGE);
    expect((await fetch(`${svc.url}/api/v1/health`)).status).toBe(200);

    // restart: the stored configuration reconnects at start-up, through ari-client's redirect again
    svc.child.kill('SIGTERM');
    expect((await svc.exited).code).toBe(0);
    fake.redirectApiDocs = { location: 'http://169.254.169.254/latest/meta-data/', after: 1 };
    svc = await spawnService({ CALLPLANE_DATA_DIR: dataDir, CALLPLANE_ALLOW_PRIVATE_NETWORK: 'true' });
    await logged(svc, REDIRECT_MESSAGE);
    // and through the preflight on the background retries
    await new Promise((r) => setTimeout(r, 1500));
    const health = await fetch(`${svc.url}/api/v1/health`);
    expect(health.status).toBe(200);
    const lines = svc.stdout.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    const down = lines.find((l) => typeof l.err === 'string' && REDIRECT_MESSAGE.test(l.err as string) || typeof l.last_error === 'string' && REDIRECT_MESSAGE.test(l.last_error as string));
    expect(down).toMatchObject({ provider: 'ari', telephony_configuration_id: cfg.body.id });
    expect(svc.stderr.join('')).not.toMatch(/cb\.redirect|fatal/);
    expect(svc.child.exitCode).toBeNull();
    svc.child.kill('SIGTERM');
    expect((await svc.exited).code).toBe(0);
  }, 60_000);
});
