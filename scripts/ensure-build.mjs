#!/usr/bin/env node
// Builds dist/ with tsc only when it is missing or older than the sources, so `npm start` and `npm run cli` start
// in about a second instead of recompiling every time (issue 10). `--force` always builds (`npm run build`).
//
// "Older" compares modification times: the newest .ts or .json file under the compiled folders (and the tsconfig
// files) against dist/.buildstamp, by the rules of scripts/build-stamp.mjs. Without TypeScript installed (a
// production install with --omit=dev) an existing dist/ is used as it is.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newestMtime, stampState, writeStamp } from './build-stamp.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE_DIRS = ['core', 'adapters', 'providers', 'http', 'plugins', 'test', 'docs/examples'];
const CONFIG_FILES = ['tsconfig.json', 'tsconfig.build.json'];
export const STAMP = join(root, 'dist', '.buildstamp');

/** The newest modification time (ms) among the build's inputs; 0 when there are none. */
export function newestSourceMtime(base = root) {
  return newestMtime({
    dirs: SOURCE_DIRS.map((d) => join(base, d)),
    files: CONFIG_FILES.map((f) => join(base, f)),
    accept: (name) => name.endsWith('.ts') || name.endsWith('.json'),
  });
}

/** Why a build is needed, or null when dist/ is up to date. */
export function staleReason(base = root) {
  const state = stampState(join(base, 'dist', '.buildstamp'), newestSourceMtime(base));
  if (state === 'missing') return 'dist/ has never been built here';
  return state === 'changed' ? 'sources changed since the last build' : null;
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
  writeStamp(STAMP, started);
  return 0;
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const force = process.argv.includes('--force');
  const reason = force ? null : staleReason();
  process.exitCode = force || reason ? build(reason) : 0;
}
