#!/usr/bin/env node
// Builds dist/ with tsc only when it is missing or older than the sources, so `npm start` and `npm run cli` start
// in about a second instead of recompiling every time (issue 10). `--force` always builds (`npm run build`).
//
// "Older" compares modification times: the newest .ts file under the compiled folders (and the tsconfig files)
// against dist/.buildstamp (a source with the stamp's very time counts as newer). The stamp gets the time the
// build STARTED, so a file saved while tsc runs is still seen as newer next time. A failed build leaves no stamp.
// Without TypeScript installed (a production install with --omit=dev) an existing dist/ is used as it is.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE_DIRS = ['core', 'adapters', 'providers', 'http', 'plugins', 'test', 'docs/examples'];
const CONFIG_FILES = ['tsconfig.json', 'tsconfig.build.json'];
export const STAMP = join(root, 'dist', '.buildstamp');

/** The newest modification time (ms) among the build's inputs; 0 when there are none. */
export function newestSourceMtime(base = root) {
  let newest = 0;
  const visit = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
      const path = join(dir, e.name);
      if (e.isDirectory()) visit(path);
      else if (e.name.endsWith('.ts') || e.name.endsWith('.json')) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const d of SOURCE_DIRS) visit(join(base, d));
  for (const f of CONFIG_FILES) if (existsSync(join(base, f))) newest = Math.max(newest, statSync(join(base, f)).mtimeMs);
  return newest;
}

/** Why a build is needed, or null when dist/ is up to date. */
export function staleReason(base = root) {
  const stamp = join(base, 'dist', '.buildstamp');
  if (!existsSync(stamp)) return 'dist/ has never been built here';
  // not older counts as changed: a file system that keeps whole seconds (or 2 s) gives a file saved just after the
  // build started the stamp's own time; at worst that builds once more, and that build's stamp is later
  return newestSourceMtime(base) >= statSync(stamp).mtimeMs ? 'sources changed since the last build' : null;
}

function build(reason) {
  const require = createRequire(import.meta.url);
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc');
  } catch {
    if (existsSync(join(root, 'dist', 'http', 'main.js'))) {
      process.stderr.write('callplane: TypeScript is not installed; using the existing dist/ as it is\n');
      return 0;
    }
    process.stderr.write('callplane: dist/ is missing and TypeScript is not installed (npm install without --omit=dev)\n');
    return 1;
  }
  const started = new Date();
  if (reason) process.stderr.write(`callplane: building (${reason})...\n`);
  const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) return r.status ?? 1;
  writeFileSync(STAMP, `${started.toISOString()}\n`);
  utimesSync(STAMP, started, started);
  return 0;
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const force = process.argv.includes('--force');
  const reason = force ? null : staleReason();
  process.exitCode = force || reason ? build(reason) : 0;
}
