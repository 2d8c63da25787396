/**
 * Headless Chromium for the console's browser tests: Debian's /usr/bin/chromium driven by playwright-core (its own
 * browser download cannot work here). `.ci/run` installs it; where it is missing the tests are skipped and say why.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { packageRoot } from '../../plugins/version.js';

export const CHROMIUM = process.env.CALLPLANE_CHROMIUM ?? '/usr/bin/chromium';

/** Null when the browser tests can run here, else the plain reason they cannot. */
export function browserSkipReason(): string | null {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} not found (install Debian's chromium: apt-get install -y chromium; .ci/run does)`;
  if (!existsSync(join(packageRoot(), 'dist', 'console', 'index.html'))) return 'dist/console is not built (npm run build)';
  return null;
}

/** Where screenshots go (gitignored); CI keeps the folder as the run's artifacts. */
export function artifactsDir(): string {
  const dir = join(packageRoot(), 'test-artifacts', 'browser');
  mkdirSync(dir, { recursive: true });
  return dir;
}

export interface LaunchedBrowser {
  browser: Browser;
  context: BrowserContext;
  close(): Promise<void>;
}

/** Chromium with a new, empty profile and no background traffic (this machine refuses outside connections). */
export async function launchBrowser(): Promise<LaunchedBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'callplane-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1366, height: 860 },
    acceptDownloads: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--autoplay-policy=no-user-gesture-required'],
  });
  return {
    browser: context.browser()!,
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
