// Start-up memory of the service on the embedded default (docs/deployment.md, "Memory at start-up"):
// `node bench/startup-memory.mjs [dist dir] [runs]` after `node scripts/ensure-build.mjs`. Each run is a fresh
// `node --expose-gc` process that imports http/main.js's graph and the composition root, builds the container and
// the express app, runs the start hooks (as `npm start` does, without listening), idles 1 s, and reports heapUsed
// after two forced GCs (right after the imports, and after start-up + idle), RSS, the time to ready and the
// process CPU time to ready. Prints the median of each figure (and every run) as JSON. Run it under the bench lock.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import os from 'node:os';

const dist = resolve(process.argv[2] ?? 'dist');
const runs = Number(process.argv[3] ?? 5);

const child = `
const t0 = performance.now();
const at = (rel) => new URL(rel, process.env.DIST_URL + '/').href;
const mb = (b) => +(b / 2 ** 20).toFixed(1);
await import(at('http/main.js'));
const { buildContainer, ExpressAppToken } = await import(at('plugins/composition-root.js'));
const { loadSettings, ensureSecretKey } = await import(at('plugins/settings.js'));
const { ProviderRegistry } = await import(at('plugins/provider-registry.js'));
const { PinoLogger } = await import(at('adapters/logging/pino-logger.js'));
const { LifecycleToken } = await import(at('plugins/tokens.js'));
const importMs = performance.now() - t0;
gc(); gc();
const afterImport = process.memoryUsage();
const settings = loadSettings(process.env);
const secretKey = ensureSecretKey(settings);
const providers = await ProviderRegistry.load(settings);
const logger = PinoLogger.create({ level: 'error', extraSensitive: providers.sensitiveFieldNames() });
const container = buildContainer({ settings, secretKey, logger, providers });
container.get(ExpressAppToken);
const lifecycle = container.get(LifecycleToken);
await lifecycle.start();
const readyMs = performance.now() - t0;
const cpu = process.cpuUsage();
await new Promise((r) => setTimeout(r, 1000));
gc(); gc();
const idle = process.memoryUsage();
process.stdout.write(JSON.stringify({
  import_ms: Math.round(importMs), ready_ms: Math.round(readyMs), cpu_ms_to_ready: Math.round((cpu.user + cpu.system) / 1000),
  heap_after_import_mb: mb(afterImport.heapUsed), heap_idle_mb: mb(idle.heapUsed), rss_idle_mb: mb(idle.rss),
}) + '\\n');
await lifecycle.stop();
process.exit(0);
`;

const results = [];
for (let i = 0; i < runs; i++) {
  const dataDir = mkdtempSync(join(tmpdir(), 'callplane-startup-mem-'));
  try {
    const out = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', child], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CALLPLANE_DATA_DIR: dataDir, DIST_URL: pathToFileURL(dist).href },
      encoding: 'utf8',
    });
    if (out.status !== 0) throw new Error(`run ${i} failed: ${out.stderr}`);
    results.push(JSON.parse(out.stdout.trim().split('\n').at(-1)));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : +((s[s.length / 2 - 1] + s[s.length / 2]) / 2).toFixed(1);
};
const summary = Object.fromEntries(Object.keys(results[0]).map((k) => [k, median(results.map((r) => r[k]))]));
console.log(JSON.stringify({ dist, runs, load_avg_1m: +os.loadavg()[0].toFixed(2), median: summary, each: results }, null, 1));
