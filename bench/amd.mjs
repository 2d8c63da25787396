// Benchmark 9: answering-machine detection on the recorded fixtures (docs/voicemail.md "Measured"), next to a
// naive reference in the same run:
// - accuracy and decision time (ms after the answer) of our detector, replayed the way a voice session feeds it
//   (20 ms frames, a VAD, an STT stand-in revealing the greeting's words as it is spoken), with the Silero VAD
//   the service uses and with the energy VAD, with and without the transcript;
// - reference: "a greeting longer than 2.5 s is a machine", judged on the same VAD's first speech segment
//   (decided when the segment ends, or 2.5 s into it);
// - beep onset error and when a voicemail message would start (after the beep's end, or the greeting's);
// - the beep detector's CPU per 20 ms frame on speech and on a quiet line, against a plain DFT of the same 65
//   bins (cos/sin per sample) on the same windows, without the energy gate.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, dist, mean, percentile, report } from './lib.mjs';

const { readWav } = await dist('core/voice/wav.js');
const { replayAnswer } = await dist('core/voice/amd/amd-replay.js');
const { BeepDetector } = await dist('core/voice/amd/beep-detector.js');
const { EnergyVoiceActivityDetector } = await dist('core/voice/energy-vad.js');
let silero = null;
try {
  const { SileroVoiceActivityDetectorFactory } = await dist('adapters/vad/silero-vad.js');
  // a replay is synchronous: each window is scored during the push that completes it (no batching)
  const factory = new SileroVoiceActivityDetectorFactory({ maxWaitMs: 0 });
  silero = () => factory.create({ sampleRate: 8000 });
} catch (e) {
  process.stdout.write(`Silero VAD unavailable (${e.message}); energy VAD only\n`);
}

const DIR = join(ROOT, 'test', 'fixtures', 'amd');
const manifest = JSON.parse(readFileSync(join(DIR, 'fixtures.json'), 'utf8')).fixtures;
const fixtures = Object.entries(manifest).map(([name, truth]) => ({
  name, ...truth,
  samples: readWav(new Uint8Array(readFileSync(join(DIR, `${name}.wav`)))).samples,
  transcript: readFileSync(join(DIR, `${name}.txt`), 'utf8').trim(),
}));
const energy = () => new EnergyVoiceActivityDetector({ sampleRate: 8000 });

function ours(makeVad, withText) {
  return fixtures.map((f) => {
    const out = replayAnswer(f.samples, withText ? f.transcript : '', { vad: makeVad() });
    const verdict = out.result?.verdict ?? 'unknown';
    const messageAt = out.greetingEndedAtMs;
    const truthEnd = f.beep ? f.beep.end_ms : f.speech_ms[1];
    return {
      name: f.name, expected: f.expected, verdict, correct: verdict === f.expected, decided_ms: out.result?.decidedAtMs ?? null, reason: out.result?.reason ?? '',
      beep_error_ms: f.beep && out.beepOnsetMs !== null ? Math.round(out.beepOnsetMs - f.beep.onset_ms) : null,
      beep_missed: Boolean(f.beep) && out.beepOnsetMs === null,
      message_after_greeting_ms: f.expected === 'machine' && messageAt !== null ? Math.round(messageAt - truthEnd) : null,
    };
  });
}

function naive(makeVad, thresholdMs = 2500) {
  return fixtures.map((f) => {
    const vad = makeVad();
    let start = null;
    let verdict = 'unknown';
    let decided = null;
    for (let i = 0; i < f.samples.length && decided === null; i += 160) {
      const frameEnd = ((i + 160) / 8000) * 1000;
      for (const e of vad.push(f.samples.subarray(i, i + 160))) {
        if (e.type === 'speech_start' && start === null) start = e.atMs;
        else if (e.type === 'speech_stop' && start !== null && decided === null) {
          verdict = e.atMs - start > thresholdMs ? 'machine' : 'human';
          decided = frameEnd;
        }
      }
      if (decided === null && start !== null && frameEnd - start > thresholdMs) {
        verdict = 'machine';
        decided = frameEnd;
      }
    }
    return { name: f.name, expected: f.expected, verdict, correct: verdict === f.expected, decided_ms: decided };
  });
}

function summary(rows) {
  const times = rows.map((r) => r.decided_ms).filter((t) => t !== null);
  const beepErrors = rows.map((r) => r.beep_error_ms).filter((e) => e !== null && e !== undefined).map(Math.abs);
  const messages = rows.map((r) => r.message_after_greeting_ms).filter((m) => m !== null && m !== undefined);
  return {
    correct: rows.filter((r) => r.correct).length,
    total: rows.length,
    accuracy: rows.filter((r) => r.correct).length / rows.length,
    human_correct: rows.filter((r) => r.expected === 'human' && r.correct).length,
    machine_correct: rows.filter((r) => r.expected === 'machine' && r.correct).length,
    mean_decision_ms: times.length ? mean(times) : null,
    p95_decision_ms: times.length ? percentile(times, 95) : null,
    ...(beepErrors.length ? { beep_max_error_ms: Math.max(...beepErrors), beeps_missed: rows.filter((r) => r.beep_missed).length } : {}),
    ...(messages.length ? { message_after_greeting_mean_ms: mean(messages), message_after_greeting_max_ms: Math.max(...messages), message_before_greeting_end: messages.filter((m) => m < -50).length } : {}),
    misses: rows.filter((r) => !r.correct).map((r) => `${r.name}→${r.verdict}`),
  };
}

const variants = {};
const detail = {};
for (const [label, make] of [['silero', silero], ['energy', energy]]) {
  if (!make) continue;
  const withText = ours(make, true);
  const audioOnly = ours(make, false);
  const ref = naive(make);
  variants[label] = { ours: summary(withText), ours_audio_only: summary(audioOnly), reference: summary(ref) };
  detail[label] = withText.map((r) => ({ name: r.name, verdict: r.verdict, decided_ms: r.decided_ms, reason: r.reason, beep_error_ms: r.beep_error_ms, message_after_greeting_ms: r.message_after_greeting_ms }));
}

// --- beep detector cost ------------------------------------------------------------------------------
const speech = Int16Array.from(fixtures.filter((f) => f.expected === 'machine').flatMap((f) => Array.from(f.samples)));
const quiet = new Int16Array(8000 * 10); // a quiet line: -60 dBFS noise
let s = 7;
for (let i = 0; i < quiet.length; i++) {
  s = (s * 1103515245 + 12345) & 0x7fffffff;
  quiet[i] = Math.round(((s / 0x7fffffff) * 2 - 1) * 57);
}
const ROUNDS = 5;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function perFrame(pcm, make) {
  const frames = Math.floor(pcm.length / 160);
  const rounds = [];
  for (let r = 0; r <= ROUNDS; r++) {
    const d = make();
    const t = process.hrtime.bigint();
    for (let i = 0; i + 160 <= pcm.length; i += 160) d.push(pcm.subarray(i, i + 160), (i / 8000) * 1000);
    const ns = Number(process.hrtime.bigint() - t) / frames;
    if (r > 0) rounds.push(ns);
  }
  return median(rounds);
}

/** The reference: the same 65 bins over the same back-to-back 20 ms windows, as a plain DFT (cos/sin per sample), no gate. */
class DftBank {
  constructor() {
    this.ring = new Float64Array(160);
    this.pos = 0;
    this.since = 0;
    this.filled = 0;
    this.freqs = Array.from({ length: 65 }, (_, i) => 400 + 25 * i);
    this.best = 0;
  }
  push(pcm) {
    for (let i = 0; i < pcm.length; i++) {
      this.ring[this.pos] = pcm[i];
      this.pos = (this.pos + 1) % 160;
      if (this.filled < 160) this.filled++;
      if (++this.since >= 160 && this.filled === 160) {
        this.since = 0;
        let best = 0;
        for (const f of this.freqs) {
          let re = 0;
          let im = 0;
          for (let n = 0; n < 160; n++) {
            const x = this.ring[(this.pos + n) % 160];
            const w = (2 * Math.PI * f * n) / 8000;
            re += x * Math.cos(w);
            im -= x * Math.sin(w);
          }
          const p = re * re + im * im;
          if (p > best) best = p;
        }
        this.best = best;
      }
    }
    return [];
  }
}

const cost = {
  speech_ns: perFrame(speech, () => new BeepDetector()),
  speech_ref_ns: perFrame(speech.subarray(0, 8000 * 5), () => new DftBank()),
  quiet_ns: perFrame(quiet, () => new BeepDetector()),
  quiet_ref_ns: perFrame(quiet.subarray(0, 8000 * 5), () => new DftBank()),
};

report({
  name: 'amd',
  fixtures: fixtures.length,
  humans: fixtures.filter((f) => f.expected === 'human').length,
  machines: fixtures.filter((f) => f.expected === 'machine').length,
  beeps: fixtures.filter((f) => f.beep).length,
  variants,
  detail,
  beep_cost: cost,
});
