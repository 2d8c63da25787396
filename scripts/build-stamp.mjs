// The stamp both builds keep so they run only when their output is older than its sources: scripts/ensure-build.mjs
// (dist/.buildstamp, tsc) and console/build.mjs (dist/console/.buildstamp, Vite).
//
// "Older" compares modification times: the newest input against the stamp, and a source with the stamp's very
// time counts as newer (a file system that keeps whole seconds, or 2 s, gives a file saved just after the build
// started the stamp's own time; at worst that builds once more, and that build's stamp is later). The stamp gets
// the time the build STARTED, so a file saved while the build runs is still seen as newer next time. A failed
// build writes none.
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The newest modification time (ms) of the files under `dirs` that `accept` takes (by name) and of the listed
 * `files`; 0 when there are none. node_modules, dot-entries and the folder names in `skip` are not entered; a
 * missing folder or file counts as none.
 */
export function newestMtime({ dirs = [], files = [], skip = [], accept = () => true }) {
  let newest = 0;
  const visit = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name === 'node_modules' || e.name.startsWith('.') || skip.includes(e.name)) continue;
      const path = join(dir, e.name);
      if (e.isDirectory()) visit(path);
      else if (accept(e.name)) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const d of dirs) visit(d);
  for (const f of files) if (existsSync(f)) newest = Math.max(newest, statSync(f).mtimeMs);
  return newest;
}

/** `'missing'` when there is no stamp, `'changed'` when `newest` is not older than it, null when up to date. */
export function stampState(stamp, newest) {
  if (!existsSync(stamp)) return 'missing';
  return newest >= statSync(stamp).mtimeMs ? 'changed' : null;
}

/** Records a successful build that started at `started` (the file's time and its text). */
export function writeStamp(stamp, started) {
  writeFileSync(stamp, `${started.toISOString()}\n`);
  utimesSync(stamp, started, started);
}
