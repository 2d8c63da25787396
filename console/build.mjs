#!/usr/bin/env node
// Builds the web console (console/src, Vite + Preact) into dist/console, which the service serves at `/`.
// Like scripts/ensure-build.mjs it builds only when dist/console is missing or older than the console's sources
// (`--force` always builds), so `npm ci` builds it once (prepare) and `npm start` (prestart) only when stale;
// the stamp's rules are scripts/build-stamp.mjs's. Without Vite installed (a production
// install with --omit=dev) an existing dist/console is used as it is, and without one the service says so at `/`.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newestMtime, stampState, writeStamp } from '../scripts/build-stamp.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
export const OUT_DIR = join(root, 'dist', 'console');
const STAMP = join(OUT_DIR, '.buildstamp');

/** The newest modification time (ms) among the console's inputs (its folder, less outputs, and the lockfile). */
export function newestConsoleMtime() {
  return newestMtime({ dirs: [here], skip: ['dist'], files: ['package-lock.json', 'examples/agent.json'].map((f) => join(root, f)) });
}

/** Why a build is needed, or null when dist/console is up to date. */
export function consoleStaleReason() {
  const state = stampState(STAMP, newestConsoleMtime());
  if (state === 'missing') return 'dist/console has never been built here';
  return state === 'changed' ? 'console sources changed since the last build' : null;
}

export async function buildConsole(reason) {
  let vite;
  try {
    vite = await import('vite');
  } catch {
    process.stderr.write(existsSync(join(OUT_DIR, 'index.html'))
      ? 'callplane: Vite is not installed; using the existing dist/console as it is\n'
      : 'callplane: the web console is not built and Vite is not installed (npm install without --omit=dev); the API works without it\n');
    return 0;
  }
  const started = new Date();
  if (reason) process.stderr.write(`callplane: building the web console (${reason})...\n`);
  try {
    await vite.build({ configFile: join(here, 'vite.config.mjs'), logLevel: 'warn' });
  } catch (err) {
    process.stderr.write(`callplane: the web console build failed: ${err?.message ?? err}\n`);
    return 1;
  }
  // gzip siblings of the hashed scripts and styles, served to browsers that accept gzip (http/routes/console-static.ts)
  const assets = join(OUT_DIR, 'assets');
  for (const name of existsSync(assets) ? readdirSync(assets) : []) {
    if (/\.(js|css|svg)$/.test(name)) writeFileSync(join(assets, `${name}.gz`), gzipSync(readFileSync(join(assets, name)), { level: 9 }));
  }
  writeStamp(STAMP, started);
  return 0;
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const force = process.argv.includes('--force');
  const reason = force ? null : consoleStaleReason();
  process.exitCode = force || reason ? await buildConsole(reason) : 0;
}
