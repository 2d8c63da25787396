/**
 * scripts/build-stamp.mjs: the one set of stamp rules of both builds (scripts/ensure-build.mjs for dist/,
 * console/build.mjs for dist/console). Run in a child node, as the builds run.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { packageRoot } from '../../plugins/version.js';

const stampModule = join(packageRoot(), 'scripts', 'build-stamp.mjs');
const consoleBuild = join(packageRoot(), 'console', 'build.mjs');

/** Runs `code` (an ES module body with `m`, the stamp module) in a child node; its stdout parsed as JSON. */
function run(code: string): unknown {
  const src = `import * as m from ${JSON.stringify(stampModule)};\n${code}`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', src], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

describe('build stamp', () => {
  const dir = mkdtempSync(join(tmpdir(), 'callplane-build-stamp-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
  const touch = (path: string, s: number) => {
    writeFileSync(path, 'x');
    utimesSync(path, at(s), at(s));
  };

  it('finds the newest accepted input, skipping node_modules, dot-entries, the skipped folders and what is missing', () => {
    mkdirSync(join(dir, 'src', 'deep'), { recursive: true });
    for (const d of ['node_modules', '.cache', 'dist']) mkdirSync(join(dir, 'src', d));
    touch(join(dir, 'src', 'a.ts'), 10);
    touch(join(dir, 'src', 'deep', 'b.ts'), 20);
    touch(join(dir, 'src', 'deep', 'c.md'), 50);
    for (const d of ['node_modules', '.cache', 'dist']) touch(join(dir, 'src', d, 'z.ts'), 90);
    touch(join(dir, 'tsconfig.json'), 30);
    const args = JSON.stringify({ dirs: [join(dir, 'src'), join(dir, 'absent')], files: [join(dir, 'tsconfig.json'), join(dir, 'absent.json')], skip: ['dist'] });
    expect(run(`const a = ${args}; console.log(JSON.stringify([
      m.newestMtime({ ...a, accept: (n) => n.endsWith('.ts') }), m.newestMtime(a), m.newestMtime({ ...a, dirs: [], files: [] })]));`))
      .toEqual([at(30).getTime(), at(50).getTime(), 0]);
  });

  it('is missing, then changed for an input newer than or as old as the stamp (a coarse clock), else up to date', () => {
    const stamp = join(dir, 'stamp');
    const s = JSON.stringify(stamp);
    expect(run(`console.log(JSON.stringify(m.stampState(${s}, 0)))`)).toBe('missing');
    expect(run(`m.writeStamp(${s}, new Date(${at(100).getTime()})); console.log(JSON.stringify([
      m.stampState(${s}, ${at(101).getTime()}), m.stampState(${s}, ${at(100).getTime()}), m.stampState(${s}, ${at(99).getTime()})]))`))
      .toEqual(['changed', 'changed', null]);
    expect(statSync(stamp).mtimeMs).toBe(at(100).getTime());
    expect(readFileSync(stamp, 'utf8')).toBe(`${at(100).toISOString()}\n`);
  });

  it('is what console/build.mjs follows: a console source with the very time of its stamp rebuilds', () => {
    // a copy of the console build in a tree of its own: console/build.mjs, scripts/build-stamp.mjs, dist/console
    const tree = join(dir, 'tree');
    for (const d of ['console/src', 'scripts', 'dist/console']) mkdirSync(join(tree, d), { recursive: true });
    copyFileSync(consoleBuild, join(tree, 'console', 'build.mjs'));
    copyFileSync(stampModule, join(tree, 'scripts', 'build-stamp.mjs'));
    for (const f of ['console/build.mjs', 'scripts/build-stamp.mjs']) utimesSync(join(tree, f), at(1), at(1));
    touch(join(tree, 'console', 'src', 'app.tsx'), 200);
    const reason = () => {
      const r = spawnSync(process.execPath, ['--input-type=module', '-e',
        `import { consoleStaleReason } from ${JSON.stringify(join(tree, 'console', 'build.mjs'))}; console.log(JSON.stringify(consoleStaleReason()));`], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(r.stderr);
      return JSON.parse(r.stdout) as unknown;
    };
    const stamp = join(tree, 'dist', 'console', '.buildstamp');
    expect(reason()).toBe('dist/console has never been built here');
    touch(stamp, 200);
    expect(reason()).toBe('console sources changed since the last build');
    utimesSync(stamp, at(201), at(201));
    expect(reason()).toBeNull();
  });
});
