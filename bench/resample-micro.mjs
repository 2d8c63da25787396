// Micro-benchmark of the stateful resampler (core/voice/resample.ts) on the rate pairs of the voice path:
// 24k→8k (OpenAI TTS PCM → μ-law 8 kHz), 16k→8k and 8k→16k (Vonage L16). Per pair: µs of CPU (process.cpuUsage,
// so time spent waiting for a core on a loaded machine is not counted) per 20 ms of
// output audio, fed in 20 ms chunks and in 100 ms chunks (the sizes TTS streams arrive in), median of 7 rounds
// of 10 s of audio each. Not part of `npm run bench`: `node bench/resample-micro.mjs` after `npm run build`
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
    const times = [];
    for (let round = 0; round < 7; round++) {
      const r = createResampler(from, to);
      const t = process.cpuUsage();
      for (let at = 0; at < input.length; at += chunk) r.process(input.subarray(at, at + chunk));
      const u = process.cpuUsage(t);
      times.push(u.user + u.system);
    }
    times.sort((a, b) => a - b);
    const perFrameUs = times[3] / ((SECONDS * 1000) / 20);
    rows.push({ pair: `${from / 1000}k→${to / 1000}k`, chunk_ms: chunkMs, us_per_20ms: Math.round(perFrameUs * 100) / 100 });
  }
}
for (const r of rows) process.stdout.write(`${r.pair.padEnd(10)} chunks of ${String(r.chunk_ms).padStart(3)} ms: ${r.us_per_20ms.toFixed(2).padStart(7)} µs per 20 ms of audio\n`);
