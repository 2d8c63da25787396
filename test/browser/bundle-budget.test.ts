/**
 * The console's first load stays small: the JavaScript index.html loads (its entry script and module preloads),
 * gzip-compressed, is at most 300 KB (issue 14). Measured on the build `npm test` makes (npm run build).
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { packageRoot } from '../../plugins/version.js';

const BUDGET_BYTES = 300 * 1024;
const dist = join(packageRoot(), 'dist', 'console');

/** The JS files index.html loads at first: `<script type="module" src>` and `<link rel="modulepreload" href>`. */
export function firstLoadScripts(html: string): string[] {
  const out = new Set<string>();
  for (const m of html.matchAll(/<script[^>]*\ssrc="([^"]+\.js)"/g)) out.add(m[1]!);
  for (const m of html.matchAll(/<link[^>]*rel="modulepreload"[^>]*href="([^"]+\.js)"/g)) out.add(m[1]!);
  return [...out];
}

describe('console bundle budget', () => {
  it('loads at most 300 KB of gzip-compressed JavaScript first, and no outside resource', () => {
    if (!existsSync(join(dist, 'index.html'))) {
      const r = spawnSync(process.execPath, [join(packageRoot(), 'console', 'build.mjs')], { encoding: 'utf8' });
      expect(r.status).toBe(0);
    }
    const html = readFileSync(join(dist, 'index.html'), 'utf8');
    const scripts = firstLoadScripts(html);
    expect(scripts.length).toBeGreaterThan(0);
    let gz = 0;
    let raw = 0;
    for (const src of scripts) {
      expect(src).toMatch(/^\/assets\//); // same origin, no CDN
      const bytes = readFileSync(join(dist, src));
      raw += bytes.length;
      gz += gzipSync(bytes, { level: 9 }).length;
    }
    process.stdout.write(`console first-load JavaScript: ${scripts.length} file(s), ${raw} bytes, ${gz} bytes gzip (budget ${BUDGET_BYTES})\n`);
    expect(gz).toBeLessThanOrEqual(BUDGET_BYTES);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//); // no external scripts, styles or fonts
  });

  it('finds the entry script and the preloads in index.html', () => {
    expect(firstLoadScripts('<script type="module" crossorigin src="/assets/index-a1.js"></script><link rel="modulepreload" crossorigin href="/assets/vendor-b2.js">'))
      .toEqual(['/assets/index-a1.js', '/assets/vendor-b2.js']);
  });
});
