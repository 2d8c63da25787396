// Micro-benchmark of the stateful resampler (core/voice/resample.ts) on the rate pairs of the voice path:
// 24k→8k (OpenAI TTS PCM → μ-law 8 kHz), 16k→8k and 8k→16k (Vonage L16). Per pair: µs of CPU (process.cpuUsage,
// so time spent waiting for a core on a loaded machine is not counted) per 20 ms of
// output audio, fed in 20 ms chunks and in 100 ms chunks (the sizes TTS streams arrive in), median of 7 rounds
// of 10 s of audio each, for the kernel the service uses (WebAssembly SIMD for integer decimation,
// core/voice/resample-simd.ts) and the JavaScript kernel (createResampler(..., 'js')) as the reference; and the
// whole L16 24 kHz → μ-law 8 kHz conversion of TTS audio in 100 ms slices. Not part of `npm run bench`:
// `node bench/resample-micro.mjs` after `npm run build`
// (BENCH_DIST=<dir> reads another build).
import { join } from 'node:path';
import { DIST } from './lib.mjs';

const { createResampler } = await import(join(process.env.BENCH_DIST ?? DIST, 'core/voice/resample.js'));

const SECONDS = 10;
const rows = [];
for (const [from, to] of [[24000, 8000], [16000, 8000], [8000, 16000]]) {
  const input = Int16Array.from({ length: from * SECONDS }, (_, i) => Math.round(8000 * Math.sin(i * 0.21) + 3000 * Math.sin(i * 1.7)));
  for (const chunkMs of [20, 100]) {
    const chunk = (from * chunkMs) / 1000;
    const kernels = {};
    // the kernel the service uses (WebAssembly SIMD for 24k→8k and 16k→8k) and, as the reference, the JavaScript one
    for (const kernel of ['auto', 'js']) {
    const times = [];
    for (let round = 0; round < 7; round++) {
      const r = createResampler(from, to, kernel);
      const t = process.cpuUsage();
      for (let at = 0; at < input.length; at += chunk) r.process(input.subarray(at, at + chunk));
      const u = process.cpuUsage(t);
      times.push(u.user + u.system);
    }
    times.sort((a, b) => a - b);
    kernels[kernel] = times[3] / ((SECONDS * 1000) / 20);
    }
    const simd = createResampler(from, to).usesSimd;
    rows.push({ pair: `${from / 1000}k→${to / 1000}k`, chunk_ms: chunkMs, kernel: simd ? 'SIMD' : 'JS', us_per_20ms: Math.round(kernels.auto * 100) / 100, js_us_per_20ms: Math.round(kernels.js * 100) / 100 });
  }
}
// The whole TTS conversion the playout runs as it plays (core/voice/carrier-audio.ts toSessionAudio): 24 kHz L16
// bytes in 100 ms slices → resampled → μ-law 8 kHz, as the session gets it from an OpenAI speech answer.
{
  const { toSessionAudio } = await import(join(process.env.BENCH_DIST ?? DIST, 'core/voice/carrier-audio.js'));
  const n = 24000 * SECONDS;
  const bytes = new Uint8Array(2 * n);
  for (let i = 0; i < n; i++) {
    const v = Math.round(8000 * Math.sin(i * 0.21) + 3000 * Math.sin(i * 1.7));
    bytes[2 * i] = v & 0xff;
    bytes[2 * i + 1] = (v >> 8) & 0xff;
  }
  const times = [];
  for (let round = 0; round < 7; round++) {
    const c = toSessionAudio({ encoding: 'l16', sampleRate: 24000 });
    const t = process.cpuUsage();
    for (let at = 0; at < bytes.length; at += 4800) c.convert(bytes.subarray(at, at + 4800));
    const u = process.cpuUsage(t);
    times.push(u.user + u.system);
  }
  times.sort((a, b) => a - b);
  rows.push({ pair: 'L16 24k→μ-law 8k', chunk_ms: 100, kernel: 'service', us_per_20ms: Math.round((times[3] / ((SECONDS * 1000) / 20)) * 100) / 100 });
}
process.stdout.write('µs of CPU per 20 ms of audio: the kernel the service uses / the JavaScript kernel (same run) = ratio\n');
for (const r of rows) {
  const ref = r.js_us_per_20ms === undefined ? '' : ` / ${r.js_us_per_20ms.toFixed(2).padStart(7)} JS = ${(r.us_per_20ms / r.js_us_per_20ms).toFixed(2)}`;
  process.stdout.write(`${r.pair.padEnd(17)} chunks of ${String(r.chunk_ms).padStart(3)} ms: ${r.kernel.padEnd(7)} ${r.us_per_20ms.toFixed(2).padStart(7)}${ref}\n`);
}
