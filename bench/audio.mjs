// Benchmark 6: the audio path's per-call CPU costs (docs/voice.md "Audio path"), each next to a reference measured
// in the same process on the same audio:
// - Silero VAD per 32 ms window: ours (SileroVoiceActivityDetector.push: gate, context, per-call state,
//   hysteresis, one window per native run) against onnxruntime-node's public API used directly
//   (`await session.run(feeds)` with fresh tensors per window, the state fed back and nothing else); and CPU
//   per window when the batcher scores 1, 10 or 50 calls' windows in one inference, back to back and with
//   20 ms idle between batches (as in a service: the model's weights are out of the cache by the next window);
//   and for 1 and 50 calls on the inference thread (the service's default): this thread's CPU per window and the
//   round trip per batch;
// - G.711 μ-law per 20 ms frame (160 bytes): our table decode/encode against per-sample arithmetic;
// - resampling per 20 ms: our polyphase low-pass resamplers against linear interpolation (no filter);
// - an inbound media message (one per 20 ms per call) read into audio by the carrier's framing: ours (Twilio's and
//   Telnyx's parse: the byte-scanning fast path, core/calls/media-json-framing.ts fastMediaAudio) against the full
//   parse every message took before (UTF-8 text, JSON.parse, the payload checked and decoded from its string), CPU
//   time per message (process.cpuUsage) over 20 ms frames of speech in each carrier's message shape.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT, dist, mainThreadCpuMs, report } from './lib.mjs';

const require = createRequire(import.meta.url);
const ROUNDS = 5;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const now = () => process.hrtime.bigint();
const elapsedNs = (t) => Number(process.hrtime.bigint() - t);

const { readWav } = await dist('core/voice/wav.js');
const { mulawDecode, mulawEncode } = await dist('core/voice/g711.js');
const { createResampler } = await dist('core/voice/resample.js');
const { SileroVoiceActivityDetectorFactory } = await dist('adapters/vad/silero-vad.js');
const { defaultSileroModelPath } = await dist('adapters/vad/silero-session.js');

const fixture = (name) => readWav(new Uint8Array(readFileSync(join(ROOT, 'test', 'fixtures', 'audio', `${name}.wav`)))).samples;
const speech = fixture('barge-in-long');
const quiet = fixture('noise-low-2s');
const WINDOW = 256;

/** ns per window of pushing `pcm` (whole windows) through fresh detectors from `make`, median of rounds. */
function perWindow(make, pcm, repeat) {
  const windows = Math.floor(pcm.length / WINDOW) * repeat;
  const rounds = [];
  let last;
  for (let r = 0; r < ROUNDS + 1; r++) {
    const d = make();
    const t = now();
    for (let k = 0; k < repeat; k++) for (let i = 0; i + 160 <= pcm.length; i += 160) d.push(pcm.subarray(i, i + 160));
    const ns = elapsedNs(t) / windows;
    if (r > 0) rounds.push(ns); // round 0 warms up
    last = d;
  }
  return { ns: median(rounds), counts: last.counts };
}

// --- VAD ---------------------------------------------------------------------------------------------
// One window at a time, scored during the push that completes it (maxWaitMs 0), as before batching.
const single = new SileroVoiceActivityDetectorFactory({ maxWaitMs: 0, gateDbfs: -Infinity });
const oursInferred = perWindow(() => single.create({ sampleRate: 8000 }), speech, 4);
// a call is mostly the other side listening: 30% speech, 70% quiet line
const mix = new Int16Array(Math.round(speech.length / 0.3));
mix.set(speech);
for (let i = speech.length; i < mix.length; i++) mix[i] = quiet[i % quiet.length];
const gatedSingle = new SileroVoiceActivityDetectorFactory({ maxWaitMs: 0 });
const oursMix = perWindow(() => gatedSingle.create({ sampleRate: 8000 }), mix, 2);
const oursGated = perWindow(() => gatedSingle.create({ sampleRate: 8000 }), quiet, 20);

/**
 * CPU µs per window (process.cpuUsage: this benchmark is one thread) when `calls` detectors get a window each
 * and the batcher scores them in one inference; `gapMs` of idle time between rounds, as in a service where
 * other work runs between a call's windows 32 ms apart and the model's weights leave the cache.
 */
async function batchedPerWindow(calls, gapMs, rounds) {
  const f = new SileroVoiceActivityDetectorFactory({ maxWaitMs: 1000, maxBatch: 1000, gateDbfs: -Infinity });
  const detectors = Array.from({ length: calls }, () => f.create({ sampleRate: 8000, onEvent: () => undefined }));
  const windows = Math.floor(speech.length / WINDOW);
  const measured = [];
  for (let r = 0; r < rounds + 5; r++) {
    const at = (r % windows) * WINDOW;
    const t = process.cpuUsage();
    for (let k = 0; k < calls; k++) detectors[k].push(speech.subarray(at, at + WINDOW));
    f.flush();
    const c = process.cpuUsage(t);
    if (r >= 5) measured.push((c.user + c.system) / calls);
    if (gapMs) await new Promise((res) => setTimeout(res, gapMs));
  }
  const sorted = measured.sort((a, b) => a - b);
  return { mean_us: measured.reduce((a, b) => a + b, 0) / measured.length, p50_us: sorted[Math.floor(sorted.length / 2)], batches: f.sharedBatcher.stats.batches };
}
const batched = {};
for (const calls of [1, 10, 50]) {
  batched[calls] = {
    back_to_back: await batchedPerWindow(calls, 0, calls === 1 ? 2000 : 400),
    every_20ms: await batchedPerWindow(calls, 20, 100),
  };
}

/**
 * The same batches scored on the inference thread (the service's default, adapters/vad/silero-thread.ts), 20 ms
 * idle between them: this thread's CPU per window (its share: cutting windows, copying rows and states, the
 * message round trip and the callbacks; /proc per-thread ticks, 10 ms resolution, so over many batches) and the
 * round trip per batch (flush → every window's score delivered, wall µs, median), of which the inference itself
 * is the part measured inline above.
 */
async function threadedPerWindow(calls, gapMs, rounds) {
  const f = new SileroVoiceActivityDetectorFactory({ maxWaitMs: 1000, maxBatch: 1000, gateDbfs: -Infinity, inference: 'thread' });
  f.warmUp();
  if (!(await f.inferenceThread.ready)) throw new Error('the Silero inference thread did not start');
  const detectors = Array.from({ length: calls }, () => f.create({ sampleRate: 8000, onEvent: () => undefined }));
  const windows = Math.floor(speech.length / WINDOW);
  const trips = [];
  let mainMs = 0;
  let processUs = 0;
  for (let r = 0; r < rounds + 5; r++) {
    const at = (r % windows) * WINDOW;
    const m0 = mainThreadCpuMs();
    const c0 = process.cpuUsage();
    const t = performance.now();
    for (let k = 0; k < calls; k++) detectors[k].push(speech.subarray(at, at + WINDOW));
    f.flush();
    await f.settled();
    const trip = performance.now() - t;
    const c = process.cpuUsage(c0);
    if (r >= 5) {
      trips.push(trip * 1000);
      mainMs += mainThreadCpuMs() - m0;
      processUs += c.user + c.system;
    }
    if (gapMs) await new Promise((res) => setTimeout(res, gapMs));
  }
  const stats = f.sharedBatcher.stats;
  await f.close();
  if (stats.offloaded < rounds) throw new Error(`only ${stats.offloaded} of ${rounds} batches ran on the thread`);
  const sorted = trips.sort((a, b) => a - b);
  return {
    main_thread_us_per_window: (1000 * mainMs) / (rounds * calls),
    process_us_per_window: processUs / (rounds * calls),
    round_trip_p50_us: sorted[Math.floor(sorted.length / 2)],
    batches: stats.offloaded,
  };
}
const threaded = {};
for (const calls of [1, 50]) threaded[calls] = await threadedPerWindow(calls, 20, calls === 1 ? 1000 : 300);

const ort = require(require.resolve('onnxruntime-node', { paths: [ROOT] }));
const raw = await ort.InferenceSession.create(defaultSileroModelPath(), { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' });
const sr = new ort.Tensor('int64', BigInt64Array.of(8000n), []);
async function rawPerWindow(pcm, repeat) {
  const rounds = [];
  const windows = Math.floor(pcm.length / WINDOW);
  for (let r = 0; r < ROUNDS + 1; r++) {
    let state = new ort.Tensor('float32', new Float32Array(256), [2, 1, 128]);
    const t = now();
    for (let k = 0; k < repeat; k++) {
      for (let w = 0; w < windows; w++) {
        const input = new Float32Array(288);
        for (let i = 0; i < 288; i++) input[i] = (pcm[w * WINDOW - 32 + i] ?? 0) / 32768;
        const out = await raw.run({ input: new ort.Tensor('float32', input, [1, 288]), state, sr });
        state = out.stateN;
      }
    }
    if (r > 0) rounds.push(elapsedNs(t) / (windows * repeat));
  }
  return median(rounds);
}
const refInferred = await rawPerWindow(speech, 4);

// --- G.711 ---------------------------------------------------------------------------------------------
function naiveMulawDecode(byte) {
  const u = ~byte & 0xff;
  const exponent = (u >> 4) & 7;
  const magnitude = ((((u & 0x0f) << 3) + 0x84) << exponent) - 0x84;
  return u & 0x80 ? -magnitude : magnitude;
}
function naiveMulawEncode(sample) {
  let s = sample;
  const sign = s < 0 ? 0x80 : 0;
  if (sign) s = -s;
  if (s > 32635) s = 32635;
  s += 0x84;
  const exponent = Math.max(0, Math.floor(Math.log2(s)) - 7);
  return ~(sign | (exponent << 4) | ((s >> (exponent + 3)) & 0x0f)) & 0xff;
}
const FRAMES = 50_000;
const wire = mulawEncode(speech);
const frames = Array.from({ length: Math.floor(wire.length / 160) }, (_, i) => wire.subarray(i * 160, i * 160 + 160));
const pcmFrames = Array.from({ length: Math.floor(speech.length / 160) }, (_, i) => speech.subarray(i * 160, i * 160 + 160));
function perFrame(fn, list) {
  const rounds = [];
  for (let r = 0; r < ROUNDS + 1; r++) {
    const t = now();
    for (let i = 0; i < FRAMES; i++) fn(list[i % list.length]);
    if (r > 0) rounds.push(elapsedNs(t) / FRAMES);
  }
  return median(rounds);
}
const outPcm = new Int16Array(160);
const outBytes = new Uint8Array(160);
let sink = 0;
const g711 = {
  decode: perFrame((f) => { mulawDecode(f, outPcm); sink += outPcm[7]; }, frames),
  decodeRef: perFrame((f) => { for (let i = 0; i < 160; i++) outPcm[i] = naiveMulawDecode(f[i]); sink += outPcm[7]; }, frames),
  encode: perFrame((p) => { mulawEncode(p, outBytes); sink += outBytes[7]; }, pcmFrames),
  encodeRef: perFrame((p) => { for (let i = 0; i < 160; i++) outBytes[i] = naiveMulawEncode(p[i]); sink += outBytes[7]; }, pcmFrames),
};

// --- resampling ------------------------------------------------------------------------------------------
function linear(from, to) {
  let pos = 0;
  let prev = 0;
  return (pcm) => {
    const step = from / to;
    const out = new Int16Array(Math.floor((pcm.length - pos) / step) + 1);
    let n = 0;
    for (; pos < pcm.length && n < out.length; pos += step, n++) {
      const i = Math.floor(pos);
      const f = pos - i;
      const a = i === 0 ? prev : pcm[i - 1];
      out[n] = a + (pcm[i] - a) * f;
    }
    prev = pcm[pcm.length - 1];
    pos -= pcm.length;
    return out.subarray(0, n);
  };
}
const up16 = createResampler(8000, 16000).process(speech);
const at22 = createResampler(8000, 22050).process(speech);
function resamplePerFrame(from, to, input) {
  const chunk = from / 50;
  const chunks = Array.from({ length: Math.floor(input.length / chunk) }, (_, i) => input.subarray(Math.round(i * chunk), Math.round((i + 1) * chunk)));
  const ours = createResampler(from, to);
  const ref = linear(from, to);
  return { ours: perFrame((c) => { sink += ours.process(c).length; }, chunks), reference: perFrame((c) => { sink += ref(c).length; }, chunks) };
}
const resampling = {
  '8000→16000': resamplePerFrame(8000, 16000, speech),
  '16000→8000': resamplePerFrame(16000, 8000, up16),
  '22050→8000': resamplePerFrame(22050, 8000, at22),
};

// --- inbound media messages ------------------------------------------------------------------------------
const { readJsonMessage, mediaAudio, nonEmptyString } = await dist('core/calls/media-json-framing.js');
const { twilioMediaFraming } = await dist('providers/twilio/twilio-media.js');
const { telnyxMediaFraming } = await dist('providers/telnyx/telnyx-media.js');
const MESSAGES = 200_000;
/** The full parse of a JSON framing's media message (what each framing did for every message before the fast path). */
function fullParse(data) {
  const read = readJsonMessage(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  if ('ignored' in read || nonEmptyString(read.message.event) !== 'media') throw new Error('not a media message');
  return mediaAudio(read.message.media, (payload) => Buffer.from(payload, 'base64'));
}
/** CPU ns per message of `parse` over `list`, median of rounds (process.cpuUsage: load-robust). */
function cpuPerMessage(parse, list) {
  const rounds = [];
  for (let r = 0; r < ROUNDS + 1; r++) {
    const t = process.cpuUsage();
    for (let i = 0; i < MESSAGES; i++) sink += parse(list[i % list.length], false).payload.length;
    const c = process.cpuUsage(t);
    if (r > 0) rounds.push(((c.user + c.system) * 1000) / MESSAGES);
  }
  return median(rounds);
}
const b64 = (f) => Buffer.from(f).toString('base64');
const shapes = {
  twilio: { framing: twilioMediaFraming, message: (f, i) => `{"event":"media","sequenceNumber":"${i + 3}","media":{"track":"inbound","chunk":"${i + 1}","timestamp":"${i * 20}","payload":"${b64(f)}"},"streamSid":"MZ18ad3ab5a668481ce02b83e7395059f0"}` },
  telnyx: { framing: telnyxMediaFraming, message: (f, i) => `{"event":"media","sequence_number":"${i + 4}","media":{"track":"inbound","chunk":"${i + 1}","timestamp":"${i * 20}","payload":"${b64(f)}"},"stream_id":"32de0dea-53cb-4b21-89a4-9e1f1ab1a3c4"}` },
};
const mediaMessages = {};
for (const [id, { framing, message }] of Object.entries(shapes)) {
  const list = frames.map((f, i) => Buffer.from(message(f, i), 'utf8'));
  for (const m of list.slice(0, 50)) if (Buffer.compare(framing.parse(m, false).payload, fullParse(m).payload) !== 0) throw new Error(`${id}: the fast path and the full parse differ`);
  mediaMessages[id] = { ours_cpu_ns: cpuPerMessage(framing.parse, list), full_parse_cpu_ns: cpuPerMessage(fullParse, list), bytes: list[0].length };
}

report({
  name: 'audio',
  vad: {
    ours_inferred_ns: oursInferred.ns,
    reference_inferred_ns: refInferred,
    ours_call_mix_ns: oursMix.ns,
    call_mix_counts: oursMix.counts,
    ours_gated_ns: oursGated.ns,
    batched,
    threaded,
    window_ms: 32,
  },
  g711: { decode_ns: g711.decode, decode_ref_ns: g711.decodeRef, encode_ns: g711.encode, encode_ref_ns: g711.encodeRef },
  resampling,
  media_messages: mediaMessages,
  sink: sink % 7,
});
