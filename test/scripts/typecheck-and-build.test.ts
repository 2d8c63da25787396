/**
 * scripts/typecheck-and-build.mjs (`npm test`'s first step): one TypeScript program type-checks what tsconfig.json
 * takes (tests included) and emits what tsconfig.build.json would. Run on a tiny project in a temp directory with
 * the repository's TypeScript, like test/scripts/ensure-build.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { packageRoot } from '../../plugins/version.js';

describe('typecheck-and-build', () => {
  const dir = mkdtempSync(join(tmpdir(), 'callplane-typecheck-and-build-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'scripts'));
  mkdirSync(join(dir, 'core'));
  mkdirSync(join(dir, 'shared'));
  for (const f of ['typecheck-and-build.mjs', 'ensure-build.mjs', 'build-stamp.mjs']) {
    copyFileSync(join(packageRoot(), 'scripts', f), join(dir, 'scripts', f));
  }
  symlinkSync(join(packageRoot(), 'node_modules'), join(dir, 'node_modules'));
  // `types: []` and `skipLibCheck` keep each compiler run to a second or two (see ensure-build.test.ts)
  const options = { target: 'es2022', module: 'nodenext', outDir: 'dist', rootDir: '.', strict: true, declaration: true, types: [], skipLibCheck: true };
  const writeConfigs = (buildOptions: Record<string, unknown> = {}) => {
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...options, noEmit: true }, include: ['core', 'shared'] }));
    writeFileSync(join(dir, 'tsconfig.build.json'), JSON.stringify({
      extends: './tsconfig.json', compilerOptions: { noEmit: false, ...buildOptions }, include: ['core'], exclude: ['**/*.test.ts'],
    }));
  };
  writeConfigs();
  // core/a.ts is built and imports shared/b.ts, which the build config does not include: tsc -p tsconfig.build.json
  // emits it too. core/a.test.ts is type-checked and never built.
  writeFileSync(join(dir, 'core', 'a.ts'), 'import { b } from \'../shared/b.js\';\nexport const a: number = b + 1;\n');
  writeFileSync(join(dir, 'shared', 'b.ts'), 'export const b: number = 1;\n');
  const goodTest = 'import { a } from \'./a.js\';\nexport const checked: number = a;\n';
  writeFileSync(join(dir, 'core', 'a.test.ts'), goodTest);
  writeFileSync(join(dir, 'shared', 'unused.ts'), 'export const unused = 1;\n');

  const run = () => {
    const r = spawnSync(process.execPath, [join(dir, 'scripts', 'typecheck-and-build.mjs')], { cwd: dir, encoding: 'utf8' });
    return { code: r.status, out: r.stdout + r.stderr };
  };
  const emitted = () => (existsSync(join(dir, 'dist'))
    ? readdirSync(join(dir, 'dist'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name).slice(join(dir, 'dist').length + 1)).sort()
    : []);
  const reset = () => rmSync(join(dir, 'dist'), { recursive: true, force: true });

  it('fails on a type error in a file only the type check covers, and writes nothing', () => {
    reset();
    writeFileSync(join(dir, 'core', 'a.test.ts'), 'import { a } from \'./a.js\';\nexport const checked: string = a;\n');
    const r = run();
    writeFileSync(join(dir, 'core', 'a.test.ts'), goodTest);
    expect(r.code).toBe(1);
    expect(r.out).toContain('core/a.test.ts');
    expect(r.out).toContain('TS2322');
    expect(emitted()).toEqual([]);
  });

  it('emits what the build config builds (its files and what they import), declarations included, and the stamp', () => {
    reset();
    expect(run()).toEqual({ code: 0, out: '' });
    expect(emitted()).toEqual(['.buildstamp', 'core/a.d.ts', 'core/a.js', 'shared/b.d.ts', 'shared/b.js']);
  });

  it('refuses configs that differ in more than their files and noEmit', () => {
    reset();
    writeConfigs({ target: 'es2020' });
    const r = run();
    writeConfigs();
    expect(r.code).toBe(1);
    expect(r.out).toContain('differ in target');
    expect(emitted()).toEqual([]);
  });
});
