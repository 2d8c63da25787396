// The long tasks of a CPU profile (issue 12's event-loop target): reads a V8 `.cpuprofile` (e.g. from
// `node --cpu-prof --cpu-prof-dir=/tmp/p bench/voice.mjs`; the service is the main thread's profile, the larger
// file of a run is usually the worker's callers and fakes) and walks its TIMELINE, `samples` + `timeDeltas`, not
// its totals: a busy stretch is a run of consecutive samples that are not `(idle)`, i.e. time the thread never
// went back to waiting for I/O or timers, which is what an event-loop delay measures. It prints how many
// stretches are longer than MIN_MS (default 5) and how their lengths spread, then for the longest ones and for
// all of them together what dominates: self time by function, and the time under each of our own (dist/)
// functions and a few Node internals that name the work (socket reads, timers, GC).
//
//   node bench/profile-timeline.mjs <file.cpuprofile> [minMs=5] [top=12]
//
// Sample attribution: sample i covers the time until sample i+1 (timeDeltas[i+1]); V8 samples about every
// 1 ms by default (`--cpu-prof-interval` in µs to change it), so stretches are known to about a sample.
import { readFileSync } from 'node:fs';

const [file, minArg, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/profile-timeline.mjs <file.cpuprofile> [minMs=5] [top=12]');
  process.exit(2);
}
const MIN_MS = Number(minArg ?? 5);
const TOP = Number(topArg ?? 12);
const profile = JSON.parse(readFileSync(file, 'utf8'));

const byId = new Map();
for (const node of profile.nodes) byId.set(node.id, node);
const parent = new Map();
for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);

const short = (url) => {
  if (!url) return '';
  const m = /\/dist\/(.+)$/.exec(url) ?? /node_modules\/(.+)$/.exec(url) ?? /^node:(.+)$/.exec(url);
  return m ? m[1] : url.replace(/^file:\/\//, '');
};
const nameOf = (node) => {
  const f = node.callFrame;
  const u = short(f.url);
  return u ? `${f.functionName || '(anonymous)'} ${u}:${f.lineNumber + 1}` : f.functionName || '(anonymous)';
};
const isOurs = (node) => /\/dist\//.test(node.callFrame.url) && !/node_modules/.test(node.callFrame.url);
const kind = (node) => node.callFrame.functionName;

// frames to report inclusive time for: our code, plus the Node internals that say what kind of work it is
const INTERESTING = new Set(['onStreamRead', 'processTimers', 'listOnTimeout', 'processTicksAndRejections', 'writevGeneric', 'writeGeneric', 'parse', 'emit']);

/** Per node id: the distinct names on its stack that count as "inclusive" (ours + interesting), memoized. */
const stackNames = new Map();
function namesOnStack(id) {
  let names = stackNames.get(id);
  if (names) return names;
  const set = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const n = byId.get(at);
    if (isOurs(n) || INTERESTING.has(kind(n))) set.add(nameOf(n));
  }
  names = [...set];
  stackNames.set(id, names);
  return names;
}

const { samples, timeDeltas } = profile;
const durUs = (i) => (i + 1 < timeDeltas.length ? timeDeltas[i + 1] : 0);
const idle = (id) => kind(byId.get(id)) === '(idle)';

const stretches = [];
let cur = null;
let t = profile.startTime;
let busyUs = 0;
let totalUs = 0;
for (let i = 0; i < samples.length; i++) {
  t += timeDeltas[i];
  const d = Math.max(0, durUs(i));
  totalUs += d;
  if (idle(samples[i])) {
    if (cur) stretches.push(cur);
    cur = null;
    continue;
  }
  busyUs += d;
  if (!cur) cur = { startUs: t - profile.startTime, us: 0, n: 0, from: i, to: i };
  cur.us += d;
  cur.n++;
  cur.to = i;
}
if (cur) stretches.push(cur);
// The sampling interval (median gap): a much longer gap inside a stretch is the thread not running (the OS gave
// the core to another process), which a loaded machine adds to wall time; samples × interval is the CPU estimate.
const gaps = [...timeDeltas.slice(1)].sort((a, b) => a - b);
const intervalUs = gaps[Math.floor(gaps.length / 2)] ?? 1000;
const longGaps = timeDeltas.filter((d) => d > 4 * intervalUs);

function breakdown(list) {
  const self = new Map();
  const incl = new Map();
  let us = 0;
  for (const s of list) {
    for (let i = s.from; i <= s.to; i++) {
      const d = Math.max(0, durUs(i));
      us += d;
      const n = byId.get(samples[i]);
      const k = nameOf(n);
      self.set(k, (self.get(k) ?? 0) + d);
      for (const name of namesOnStack(samples[i])) incl.set(name, (incl.get(name) ?? 0) + d);
    }
  }
  const top = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, TOP).map(([k, v]) => `    ${(v / 1000).toFixed(1).padStart(8)} ms ${((100 * v) / us).toFixed(0).padStart(3)} %  ${k}`);
  return { us, self: top(self), incl: top(incl) };
}

const long = stretches.filter((s) => s.us / 1000 > MIN_MS);
const ms = (us) => (us / 1000).toFixed(1);
console.log(`${file}`);
console.log(`profile ${ms(totalUs)} ms, busy ${ms(busyUs)} ms (${((100 * busyUs) / totalUs).toFixed(0)} %), ${stretches.length} busy stretches; sampling every ${intervalUs} µs (median), ${longGaps.length} gaps over 4× that (${ms(longGaps.reduce((a, d) => a + d, 0))} ms: the thread was not running, e.g. a loaded machine)`);
const buckets = [5, 10, 20, 30, 50, 100, Infinity];
const hist = buckets.map((b, k) => {
  const lo = k === 0 ? 0 : buckets[k - 1];
  const inB = stretches.filter((s) => s.us / 1000 > lo && s.us / 1000 <= b);
  return `  (${lo}, ${b}] ms: ${inB.length} stretches, ${ms(inB.reduce((a, s) => a + s.us, 0))} ms`;
});
console.log(hist.join('\n'));
const sorted = [...stretches].sort((a, b) => b.n - a.n); // by samples: a stretch the OS interrupted is not longer work
console.log(`longest: ${sorted.slice(0, 10).map((s) => `${(s.us / 1000).toFixed(1)} (${ms(s.n * intervalUs)} sampled)`).join(', ')} ms; > ${MIN_MS} ms: ${long.length} (${ms(long.reduce((a, s) => a + s.us, 0))} ms)`);
const longByCpu = stretches.filter((s) => (s.n * intervalUs) / 1000 > MIN_MS);
console.log(`by samples × interval (robust to descheduling): > ${MIN_MS} ms: ${longByCpu.length}, > 20 ms: ${stretches.filter((s) => (s.n * intervalUs) / 1000 > 20).length}, > 50 ms: ${stretches.filter((s) => (s.n * intervalUs) / 1000 > 50).length}`);

const all = breakdown(long);
console.log(`\nall stretches > ${MIN_MS} ms together (${ms(all.us)} ms): self time`);
console.log(all.self.join('\n'));
console.log('  inclusive (our dist/ code and Node internals naming the work)');
console.log(all.incl.join('\n'));

const SHOW = Number(process.env.SHOW ?? 5);
for (const s of sorted.slice(0, SHOW)) {
  const b = breakdown([s]);
  console.log(`\nstretch at ${ms(s.startUs)} ms: ${ms(s.us)} ms wall, ${s.n} samples, self`);
  console.log(b.self.slice(0, 8).join('\n'));
  console.log('  inclusive');
  console.log(b.incl.slice(0, 8).join('\n'));
}
