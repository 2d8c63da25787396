/**
 * scripts/ensure-build.mjs (prestart, precli, prepare): builds only when dist/ is missing or older than the
 * sources. Run on a tiny project in a temp directory with the repository's TypeScript, so it needs no full build.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { packageRoot } from '../../plugins/version.js';

describe('ensure-build', () => {
  const dir = mkdtempSync(join(tmpdir(), 'callplane-ensure-build-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'scripts'));
  mkdirSync(join(dir, 'core'));
  for (const f of ['ensure-build.mjs', 'build-stamp.mjs']) copyFileSync(join(packageRoot(), 'scripts', f), join(dir, 'scripts', f));
  symlinkSync(join(packageRoot(), 'node_modules'), join(dir, 'node_modules'));
  // `types: []` and `skipLibCheck`: without them each of this file's seven compiler runs loads and checks every
  // @types package of the repository (about 190 files, 15 s of CPU each); the build under test is the same.
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'es2022', module: 'nodenext', outDir: 'dist', strict: true, types: [], skipLibCheck: true },
  }));
  writeFileSync(join(dir, 'tsconfig.build.json'), JSON.stringify({ extends: './tsconfig.json', include: ['core'] }));
  writeFileSync(join(dir, 'core', 'a.ts'), 'export const a: number = 1;\n');

  const ensure = (...args: string[]) => {
    const r = spawnSync(process.execPath, [join(dir, 'scripts', 'ensure-build.mjs'), ...args], { cwd: dir, encoding: 'utf8' });
    return { code: r.status, stderr: r.stderr };
  };

  it('builds when dist/ was never built, then not again until a source is newer than the stamp', () => {
    const first = ensure();
    expect(first).toEqual({ code: 0, stderr: 'callplane: building (dist/ has never been built here)...\n' });
    expect(existsSync(join(dir, 'dist', 'a.js'))).toBe(true);
    expect(existsSync(join(dir, 'dist', '.buildstamp'))).toBe(true);

    const t = Date.now();
    expect(ensure()).toEqual({ code: 0, stderr: '' });
    expect(Date.now() - t).toBeLessThan(2000); // no compiler run: only a walk over the sources

    // a source saved after the last build started. Both times are set here: a stamp put back by a fixed minute
    // is not older than sources written at the start of this test when the first build took longer than that
    // (168 s on a machine at load 15).
    const now = new Date();
    const earlier = new Date(now.getTime() - 60_000);
    utimesSync(join(dir, 'core', 'a.ts'), now, now);
    utimesSync(join(dir, 'dist', '.buildstamp'), earlier, earlier);
    expect(ensure()).toEqual({ code: 0, stderr: 'callplane: building (sources changed since the last build)...\n' });
    expect(ensure()).toEqual({ code: 0, stderr: '' });
  }, 180_000);

  it('builds when a source has the very time of the stamp (a coarse file system clock cannot tell them apart)', () => {
    expect(ensure('--force').code).toBe(0);
    const stamp = join(dir, 'dist', '.buildstamp');
    const same = new Date(Math.floor(Date.now() / 1000) * 1000 - 5_000); // whole seconds, as a 1 s file system keeps
    utimesSync(stamp, same, same);
    for (const f of ['core/a.ts', 'tsconfig.json', 'tsconfig.build.json']) utimesSync(join(dir, f), same, same);
    expect(ensure()).toEqual({ code: 0, stderr: 'callplane: building (sources changed since the last build)...\n' });
    expect(ensure()).toEqual({ code: 0, stderr: '' });
  }, 180_000);

  it('always builds with --force, and a failed build fails and leaves no stamp', () => {
    expect(ensure('--force').code).toBe(0);
    writeFileSync(join(dir, 'core', 'a.ts'), 'export const a: number = "not a number";\n');
    rmSync(join(dir, 'dist', '.buildstamp'));
    const failed = ensure();
    expect(failed.code).not.toBe(0);
    expect(existsSync(join(dir, 'dist', '.buildstamp'))).toBe(false);
  }, 180_000);
});
