import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: the nearest ancestor holding callplane's package.json (works from source and dist/). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate) && JSON.parse(readFileSync(candidate, 'utf8')).name === 'callplane') return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('callplane package.json not found');
    dir = parent;
  }
}

let cached: string | undefined;
/** The version of package.json, reported by /health and the OpenAPI document. */
export function packageVersion(): string {
  cached ??= JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')).version as string;
  return cached;
}
