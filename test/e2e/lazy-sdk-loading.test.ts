/**
 * The built service loads the heavy optional SDKs only when it uses them (docs/deployment.md, "Memory at
 * start-up"): started on the embedded default it has none of ari-client (with swagger-client and request), the
 * MongoDB driver, the twilio SDK or swagger-ui-express; each arrives with its first use. Needs `npm run build`
 * (the child is test/support/loaded-packages.child.ts from dist/).
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../plugins/version.js';
import { FakeAriServer } from '../fakes/ari/fake-ari-server.js';
import { FakeTwilioServer } from '../fakes/twilio/fake-twilio-server.js';
import { distFile, runNode } from '../support/process.js';

interface StepReport {
  step: string;
  loaded: string[];
  constructed?: string[];
  status?: number;
  result?: unknown;
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function runChild(steps: string[], env: Record<string, string> = {}): Promise<Map<string, StepReport>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'callplane-lazy-'));
  dirs.push(dataDir);
  const out = await runNode([distFile('test/support/loaded-packages.child.js'), ...steps], { CALLPLANE_DATA_DIR: dataDir, ...env });
  if (out.code !== 0) throw new Error(`child failed (${out.code}): ${out.stderr}`);
  const reports = out.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as StepReport);
  return new Map(reports.map((r) => [r.step, r]));
}

describe('optional SDKs load on first use', () => {
  it('starts on the embedded default with none of them; the OpenAPI JSON needs none, /docs brings swagger-ui-express', async () => {
    const r = await runChild(['start', 'openapi', 'docs']);
    expect(r.get('start')?.loaded).toEqual([]);
    expect(r.get('openapi')).toMatchObject({ status: 200, loaded: [] });
    expect(r.get('docs')).toMatchObject({ status: 200, loaded: ['swagger-ui-express', 'swagger-ui-dist'] });
  });

  it('loads ari-client (with swagger-client and request) on the first ARI REST operation, not when a client is made', async () => {
    const ari = await FakeAriServer.start({ username: 'callplane', password: 'pw' });
    try {
      const r = await runChild(['start', 'ari'], { ARI_URL: ari.url });
      expect(r.get('start')?.loaded).toEqual([]);
      expect(r.get('ari')).toMatchObject({ constructed: [], result: null, loaded: ['ari-client', 'swagger-client', 'request'] });
    } finally {
      await ari.close();
    }
  });

  it('loads the twilio SDK on the first REST call of an account, not when a client is made', async () => {
    const twilio = await FakeTwilioServer.start();
    try {
      const r = await runChild(['start', 'twilio'], { TWILIO_URL: twilio.url, TWILIO_ACCOUNT_SID: twilio.accountSid, TWILIO_AUTH_TOKEN: twilio.authToken });
      expect(r.get('start')?.loaded).toEqual([]);
      expect(r.get('twilio')).toMatchObject({ constructed: [], result: 'active', loaded: ['twilio'] });
    } finally {
      await twilio.close();
    }
  });

  it('starts without the packages installed; their first use fails naming the package', async () => {
    // an install without them: dist/ and package.json linked into a directory whose node_modules has every
    // package but these, run with symlinked paths kept (so packages resolve from that node_modules)
    const root = packageRoot();
    const install = mkdtempSync(join(tmpdir(), 'callplane-lazy-install-'));
    dirs.push(install);
    mkdirSync(join(install, 'node_modules'));
    const modules = realpathSync(join(root, 'node_modules'));
    for (const name of readdirSync(modules)) {
      if (!['ari-client', 'twilio', 'mongodb'].includes(name)) symlinkSync(join(modules, name), join(install, 'node_modules', name));
    }
    symlinkSync(realpathSync(join(root, 'dist')), join(install, 'dist'));
    symlinkSync(join(root, 'package.json'), join(install, 'package.json'));
    const run = (steps: string[], env: Record<string, string>) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'callplane-lazy-'));
      dirs.push(dataDir);
      return runNode(['--preserve-symlinks', '--preserve-symlinks-main', join(install, 'dist/test/support/loaded-packages.child.js'), ...steps], { CALLPLANE_DATA_DIR: dataDir, ...env });
    };

    const ari = await run(['start', 'ari'], { ARI_URL: 'http://127.0.0.1:9' });
    expect(ari.stdout).toContain('{"step":"start","loaded":[]}');
    expect(ari.code).toBe(1);
    expect(ari.stderr).toContain("ProviderApiError: the ari-client package could not be loaded: Cannot find module 'ari-client'");
    const twilio = await run(['start', 'twilio'], { TWILIO_URL: 'http://127.0.0.1:9', TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}`, TWILIO_AUTH_TOKEN: 'token' });
    expect(twilio.stdout).toContain('{"step":"start","loaded":[]}');
    expect(twilio.code).toBe(1);
    expect(twilio.stderr).toContain("ProviderApiError: the twilio package could not be loaded: Cannot find module 'twilio'");
    const mongo = await run(['build'], { CALLPLANE_STORAGE: 'mongodb', MONGODB_URI: 'mongodb://127.0.0.1:1/lazy_test' });
    expect(mongo.code).toBe(1);
    expect(mongo.stderr).toContain("MongoDB storage needs the mongodb package, which could not be loaded: Cannot find module 'mongodb'");
  });

  it('loads the MongoDB driver when the service is configured for MongoDB', async () => {
    // the container and app only (nothing listens on port 1, and nothing connects before the start hooks)
    const r = await runChild(['build'], { CALLPLANE_STORAGE: 'mongodb', MONGODB_URI: 'mongodb://127.0.0.1:1/lazy_test' });
    expect(r.get('build')?.loaded).toEqual(['mongodb']);
  });
});
