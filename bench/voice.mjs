// Benchmark 10: voice-to-voice latency of talking calls over loopback (docs/voice.md "Making calls talk").
// The real service (main thread) serves Twilio media streams; the harness, a process of its own (see
// startHarness; BENCH_VOICE_PIN=1 pins it and the service to different cores), runs the fake providers and the
// callers: an OpenAI-compatible fake with set delays (chat: first token after LLM_MS; /audio/transcriptions: STT_MS;
// /audio/speech: first PCM after TTS_MS) and one simulated Twilio caller per call (test/fakes/twilio/
// twilio-media-caller.ts: Twilio's media JSON, 20 ms μ-law frames in real time, marks echoed on its playback clock).
// Each call: the greeting, TURNS caller turns (the fixture "Yes, I will attend."), then a barge-in during the agent's
// reply. Measured at the caller's wire: end of its speech → first voiced agent frame; barge-in: start of its speech
// → the `clear`. The caller's speech starts and ends with its sound: the fixtures have digital silence around their
// words, and the instant of the first non-silent sample and the one after the last are where it starts and stops
// (a frame sent at t holds [t - 20 ms, t); no level to choose, and both are earlier than any frame that carries
// them, so the framing counts against us). Until 2026-11-29 a level line marked them (VOICE_LEVEL: the first and
// last frame of mean level ≥ 200, ≈ -44 dBFS): it put the end of "Yes, I will attend." 31.8 ms before its sound
// ended (the final consonant's fading tail, 8 ms blocks at -39.5 to -42.5 dBFS, 20-25 dB under its loudest 32 ms,
// then digital silence) and the barge-in fixture's start 31.6 ms after its sound began. Each result still gives
// both from that line (`level_line`). Reference, same run: what the fakes and the VAD need
// by configuration, measured where they are (the VAD's silence hangover + the fake's own STT, first-token and
// first-audio times); platform overhead = ours − reference. First words: the caller's `start` message → the
// first voiced greeting frame at its wire; each caller connects its stream BENCH_VOICE_RING_MS (default 200) after
// its inbound webhook was answered at the earliest, as a carrier answers and then connects (the service prepares
// the greeting meanwhile; 0: the stream starts the moment the webhook is answered). False interruptions: after the
// barge-in, one more turn per fixture, and 200 ms into the agent's reply the caller plays a backchannel or line
// noise (test/fixtures/audio: "uh-huh" and "mm-hmm", longer than interruption_min_speech_ms; a quick "yeah" and a
// cough, shorter; quiet pink noise, louder hiss); a `clear` while it plays (or within 1 s after) counts as a false interruption. The
// whole run is repeated per VAD (BENCH_VOICE_VADS, default energy,silero: CALLPLANE_VOICE_VAD; Silero on its
// inference thread, BENCH_VOICE_VAD_INFERENCE=inline for the event loop: CALLPLANE_VOICE_VAD_INFERENCE) and per STT mode
// (BENCH_VOICE_STT, default utterance,streaming): `utterance` is the OpenAI-compatible /audio/transcriptions fake
// (text only after the VAD's stop, no interims), `streaming` a Deepgram-protocol fake (test/fakes/deepgram) with
// an interim per BENCH_VOICE_INTERIM_MS of speech (default 1000: Deepgram's documented cadence is about one a
// second). Both fakes recognize the fixtures by their audio (the caller plays exact fixture bytes; the fake finds
// the first voiced frame in them): each has its words (fixtures.json), noise has none. A false interruption is
// "resumed" when the call's run log has a false_interruption entry in its window (the agent said the rest of
// its cut reply), else "for good". BENCH_VOICE_TOKEN_MS (default 0: the whole reply at once) makes the fake model
// stream one word per that many ms, as a hosted model does, so the fixtures fall while the reply still streams.
// The service runs with the V8 flags of package.json's `start` script (the bench re-runs itself with them;
// BENCH_VOICE_NODE_FLAGS replaces them, '' for V8's defaults); each result lists them and the service thread's GC
// pauses during the calls (`service_gc`).
// `node bench/voice.mjs` after `npm run build`.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { PerformanceObserver, constants, monitorEventLoopDelay } from 'node:perf_hooks';
import { runInNewContext } from 'node:vm';
import { dist, freshDir, hasTaskset, mainThreadCpuMs, percentile, report } from './lib.mjs';
import os from 'node:os';

const CALLS = (process.env.BENCH_VOICE_CALLS ?? '1,50').split(',').map(Number);
const TURNS = Number(process.env.BENCH_VOICE_TURNS ?? 3);
const VADS = (process.env.BENCH_VOICE_VADS ?? 'energy,silero').split(',');
// where Silero runs (CALLPLANE_VOICE_VAD_INFERENCE): `thread` (the service's default) or `inline` (on the event loop)
const VAD_INFERENCE = process.env.BENCH_VOICE_VAD_INFERENCE ?? 'thread';
const FIRST_WORDS_TARGET_MS = 150;
const STT_MS = 100;
const LLM_MS = 200;
const TTS_MS = 80;
const VAD_HANGOVER_MS = 300; // VAD_DEFAULTS.minSilenceMs
const MIN_SPEECH_MS = 300; // interruption_min_speech_ms
const STT_MODES = (process.env.BENCH_VOICE_STT ?? 'utterance,streaming').split(',');
const INTERIM_MS = Number(process.env.BENCH_VOICE_INTERIM_MS ?? 1000);
// the fake model's pace after its first token: one word per TOKEN_MS (0: the whole reply at once). A hosted model
// streams a reply over 1-2 s, so a backchannel 200 ms into the reply's audio falls while it still streams.
const TOKEN_MS = Number(process.env.BENCH_VOICE_TOKEN_MS ?? 0);
// webhook answered → the carrier's stream `start`, at least (a real carrier answers, then connects its WebSocket):
// the time the agent has to prepare the greeting. 0: the stream starts the moment the webhook is answered.
const RING_MS = Number(process.env.BENCH_VOICE_RING_MS ?? 200);
// The calls' streams start evenly over this window. Each caller follows the same script with the same pauses, so
// calls that start together keep taking their turns together for the whole run: started within 1 s (the default),
// all 50 calls' turns fall in the same second, every ~6 s, and the service has ~10 ms of work per turn × 50 at once
// (a busy burst of ~80 % in 500 ms buckets) with little between: the worst case, which the targets are held to. 50
// concurrent calls of a real campaign are at random points of their conversations: BENCH_VOICE_ARRIVAL_MS=6000
// spreads their starts over one turn cycle of this script (greeting, a line, the reply), and their turns with them.
const ARRIVAL_MS = Number(process.env.BENCH_VOICE_ARRIVAL_MS ?? 1000);
const RESUME_WINDOW_MS = 4000; // after a fixture ends: a resume (endpointing + TTS) lands well within it
// The fake TTS's answer: a 440 Hz tone, its longest (4 s) computed once. Each answer is a prefix of it, the same
// bytes as when every answer computed its own: ~5 ms of the harness's CPU per 3-4 s answer (50 of them at once at 50 calls)
// delayed the other calls' fakes and the callers' wire timestamps, not the service.
const TONE = Buffer.alloc(4 * 24000 * 2);
for (let i = 0; i < TONE.length / 2; i++) TONE.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 24000)), i * 2);
const REPLY = 'Thank you. I have noted that you will come, and we look forward to seeing you at the clinic.';

// ---------------------------------------------------------------------------------------------------------
// Worker: the fake providers and the callers.

async function workerMain(port) {
  const { TwilioMediaCaller, VOICE_LEVEL: CALLER_VOICE_LEVEL } = await dist('test/fakes/twilio/twilio-media-caller.js');
  const { FakeDeepgramServer } = await dist('test/fakes/deepgram/fake-deepgram-server.js');
  const { readWav } = await dist('core/voice/wav.js');
  const { mulawEncode } = await dist('core/voice/g711.js');
  const fake = { stt: [], llm: [], tts: [] };
  // The fixtures the callers play, as μ-law bytes, with their words (set by the first `calls` message).
  let known = [];
  /**
   * The words of the first speech fixture found in `mulaw`: voiced 4 ms stretches are looked up in the fixtures'
   * bytes ('' when none matches: noise, which is in no speech fixture). A per-utterance upload can hold noise the
   * VAD did not call speech before the words (a cough, then "Yes, I will attend."): the scan goes on past it.
   */
  const recognize = (mulaw) => {
    let step = 16;
    for (let i = 0; i + 32 <= mulaw.length; i += step) {
      const frame = mulaw.subarray(i, i + 32);
      let sum = 0;
      for (const b of frame) sum += ~b & 0x7f; // μ-law magnitude (0 = silence): a voiced stretch only
      if (sum / 32 < 24) continue;
      const hit = known.find((k) => k.audio.indexOf(Buffer.from(frame)) >= 0);
      if (hit) return hit.text;
      step = 160; // not a fixture's speech: look again every 20 ms
    }
    return '';
  };
  // its final comes STT_MS after Finalize or after its own endpointing (the `endpointing` ms of silence the client
  // asks for, 300 like the VAD's hangover), like the per-utterance fake's answer. Its speech starts at the callers'
  // level line (VOICE_LEVEL: quiet noise is no speech to it) and ends where the reference's does, with the sound
  // (releaseThreshold 0: its silence count starts after the last non-silent sample). An end of speech earlier than
  // the reference's made its own endpointing final that much early, which the reference (end of speech + hangover +
  // STT_MS) did not see: with its default line (mean level 500) the streaming rows read ~24 ms low (until
  // 2026-11-28), and with the callers' line ~32 ms low once the reference followed the sound (2026-11-29).
  const deepgram = await FakeDeepgramServer.start({ interimEveryMs: INTERIM_MS, finalDelayMs: STT_MS, energyThreshold: CALLER_VOICE_LEVEL, releaseThreshold: 0, transcribe: (audio) => recognize(audio) });
  const server = createServer((req, res) => {
    const t0 = performance.now();
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.url.endsWith('/audio/transcriptions')) {
        const body = Buffer.concat(chunks);
        const riff = body.indexOf('RIFF');
        let text = '';
        try {
          if (riff >= 0) text = recognize(mulawEncode(readWav(new Uint8Array(body.subarray(riff))).samples));
        } catch { /* not a WAV we can read: no words */ }
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ text }));
          fake.stt.push(performance.now() - t0);
        }, STT_MS);
        return;
      }
      if (req.url.endsWith('/audio/speech')) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'audio/pcm' });
          const ms = Math.min(4000, body.input.length * 40);
          const pcm = TONE.subarray(0, Math.round((ms * 24000) / 1000) * 2);
          res.write(pcm.subarray(0, 4800));
          fake.tts.push(performance.now() - t0);
          res.end(pcm.subarray(4800));
        }, TTS_MS);
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (delta, finish = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        res.write(chunk({ role: 'assistant', content: '' }));
        fake.llm.push(performance.now() - t0);
        const end = (out) => {
          out += chunk({}, 'stop');
          if (body.stream_options?.include_usage) out += `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: body.model, choices: [], usage: { prompt_tokens: 200, completion_tokens: 20, total_tokens: 220 } })}\n\n`;
          res.end(`${out}data: [DONE]\n\n`);
        };
        const words = REPLY.match(/\S+\s*/g);
        if (TOKEN_MS <= 0) {
          end(words.map((w) => chunk({ content: w })).join(''));
          return;
        }
        let i = 0;
        const next = () => {
          if (res.destroyed) return; // the service aborted the stream (a real interruption)
          if (i === words.length - 1) return end(chunk({ content: words[i] }));
          res.write(chunk({ content: words[i++] }));
          setTimeout(next, TOKEN_MS);
        };
        next();
      }, LLM_MS);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  port.postMessage({ type: 'fake', url: `http://127.0.0.1:${server.address().port}/v1`, deepgram: { url: deepgram.baseUrl, key: deepgram.key } });

  port.on('message', async (m) => {
    if (m.type !== 'calls') return;
    fake.stt.length = 0;
    fake.llm.length = 0;
    fake.tts.length = 0;
    const speech = new Uint8Array(m.speech);
    const barge = new Uint8Array(m.barge);
    const noises = m.noises.map((n) => ({ name: n.name, audio: new Uint8Array(n.audio) }));
    known = m.known.map((k) => ({ text: k.text, audio: Buffer.from(k.audio) }));
    const firstWords = [];
    // the callers' and fakes' own event loop: a late one delays what the wire shows, on top of the service
    const workerLoop = monitorEventLoopDelay({ resolution: 10 });
    workerLoop.enable();
    const rings = [];
    const falseInterruptions = Object.fromEntries(noises.map((n) => [n.name, { played: 0, clears: 0 }]));
    /** Per fixture played: the call, its wall-clock window (for the run log's false_interruption entries) and whether it was cleared. */
    const noiseWindows = [];
    const latencies = [];
    const latenciesFromLine = []; // the same turns from the level line's end of speech (the measure until 2026-11-29)
    const latencyAt = []; // [call, turn, ms since the first call, latency] (BENCH_VOICE_DEBUG)
    const bargeIns = [];
    const bargeInsFromLine = [];
    const bargeInAt = []; // [call, ms since the first call at the caller's onset, barge-in ms] (BENCH_VOICE_DEBUG)
    const failures = [];
    let early = 0;
    const t0 = performance.now();
    const harnessLag = process.env.BENCH_VOICE_DEBUG ? lagTimeline(t0) : null;
    await Promise.all(m.calls.map(async (call, i) => {
      // calls start evenly over ARRIVAL_MS (see there); each stream starts RING_MS after its webhook was answered
      // at the earliest (the carrier answers and connects the stream; the agent prepares meanwhile)
      const ringLeft = call.answeredAt + m.ringMs - (performance.timeOrigin + performance.now());
      await new Promise((r) => setTimeout(r, Math.max((i * m.arrivalMs) / m.calls.length - (performance.now() - t0), ringLeft, 0)));
      let caller;
      try {
        caller = await TwilioMediaCaller.connect({ url: call.url, callSid: call.callSid, parameters: call.parameters });
        // connect() sends `start` and then starts the caller's clock (startMs) at once
        const startSentAt = caller.startMs;
        rings.push(performance.timeOrigin + startSentAt - call.answeredAt);
        await caller.until('greeting', () => caller.agentVoiceAt.length > 0, 10_000);
        firstWords.push(caller.agentVoiceAt[0] - startSentAt);
        for (let turn = 0; turn <= TURNS; turn++) {
          // wait for the agent to finish (no voice for 700 ms)
          await caller.until('agent quiet', () => performance.now() - caller.agentVoiceAt.at(-1) > 700, 20_000);
          if (turn === TURNS) {
            // barge-in: one more turn, and 200 ms into the agent's reply the caller talks over it
            const line = caller.speak(speech);
            await caller.until('line sent', () => caller.spoke[line].endMs !== null, 10_000);
            const end = caller.spoke[line].endMs;
            await caller.until('reply starts', () => caller.agentVoiceAt.at(-1) > end, 10_000);
            await new Promise((r) => setTimeout(r, 200));
            const clears = caller.clearsAt.length;
            const b = caller.speak(barge);
            await caller.until('clear', () => caller.clearsAt.length > clears, 5000);
            const onset = caller.spoke[b].soundOnsetMs;
            bargeIns.push(caller.clearsAt[clears] - onset);
            bargeInsFromLine.push(caller.clearsAt[clears] - caller.spoke[b].onsetMs);
            bargeInAt.push([i, Math.round(onset - t0), Math.round(caller.clearsAt[clears] - onset)]);
            // false interruptions: per fixture one more turn, and 200 ms into the reply the backchannel or noise
            for (const noise of noises) {
              await caller.until('agent quiet', () => performance.now() - caller.agentVoiceAt.at(-1) > 1500, 20_000);
              const ask = caller.speak(speech);
              await caller.until('line sent', () => caller.spoke[ask].endMs !== null, 10_000);
              const askEnd = caller.spoke[ask].endMs;
              await caller.until('reply starts', () => caller.agentVoiceAt.at(-1) > askEnd, 10_000);
              await new Promise((r) => setTimeout(r, 200));
              const from = performance.now();
              const fromEpoch = Date.now();
              const n = caller.speak(noise.audio);
              await caller.until('noise sent', () => caller.spoke[n].endMs !== null, 10_000);
              await new Promise((r) => setTimeout(r, 1000));
              const to = caller.spoke[n].endMs + 1000;
              falseInterruptions[noise.name].played++;
              const cleared = caller.clearsAt.some((t) => t >= from && t <= to);
              if (cleared) falseInterruptions[noise.name].clears++;
              noiseWindows.push({ call: i, name: noise.name, from: fromEpoch, to: Date.now() + RESUME_WINDOW_MS - 1000, cleared });
            }
            break;
          }
          const before = caller.agentVoiceAt.length;
          const line = caller.speak(speech);
          await caller.until('line sent', () => caller.spoke[line].endMs !== null, 10_000);
          const end = caller.spoke[line].soundEndMs;
          await caller.until('reply', () => caller.agentVoiceAt.at(-1) > end, 10_000);
          const first = caller.agentVoiceAt.slice(before).find((t) => t > caller.spoke[line].onsetMs);
          if (first < end) early++;
          latencies.push(first - end);
          latenciesFromLine.push(first - caller.spoke[line].voicedEndMs);
          latencyAt.push([i, turn, Math.round(performance.now() - t0), Math.round(first - end)]);
        }
        await caller.hangUp();
        await Promise.race([caller.closed, new Promise((r) => setTimeout(r, 3000))]);
      } catch (e) {
        failures.push(e.message);
      } finally {
        caller?.close();
      }
    }));
    workerLoop.disable();
    const dgMessages = deepgram.connections.reduce((a, c) => a + c.audioMessages.length, 0);
    const dgConnections = deepgram.connections.length;
    deepgram.connections.length = 0;
    port.postMessage({ type: 'done', deepgramAudio: { messages: dgMessages, connections: dgConnections }, harnessLag: harnessLag?.stop() ?? null, workerLoopP99Ms: workerLoop.percentile(99) / 1e6, rings, latencies, latenciesFromLine, latencyAt, bargeIns, bargeInsFromLine, bargeInAt, firstWords, falseInterruptions, noiseWindows, failures, early, fake: { stt: [...fake.stt], llm: [...fake.llm], tts: [...fake.tts] } });
  });
}

// ---------------------------------------------------------------------------------------------------------
// Main: the service.

/**
 * The V8 flags `npm start` gives the service (package.json's "start" script, the tokens before the entry point),
 * so the service measured here, which runs in this process, collects garbage as the deployed one does. The
 * BENCH_VOICE_NODE_FLAGS environment variable replaces them ('' runs on V8's defaults).
 */
function serviceNodeFlags() {
  if (process.env.BENCH_VOICE_NODE_FLAGS !== undefined) return process.env.BENCH_VOICE_NODE_FLAGS.split(/\s+/).filter(Boolean);
  try {
    const start = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts?.start ?? '';
    const words = start.split(/\s+/);
    return words.slice(words.indexOf('node') + 1).filter((w, i, all) => w.startsWith('--') && all.slice(0, i).every((x) => x.startsWith('--')));
  } catch {
    return [];
  }
}

async function main() {
  const flags = serviceNodeFlags();
  const missing = flags.filter((f) => !process.execArgv.includes(f));
  if (missing.length > 0 && !process.env.BENCH_VOICE_REEXEC) {
    // run again with them (V8's heap flags are read when the isolate starts)
    const r = spawnSync(process.execPath, [...process.execArgv, ...missing, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit', env: { ...process.env, BENCH_VOICE_REEXEC: '1' } });
    process.exit(r.status ?? 1);
  }
  const pinned = pinService();
  const { buildContainer, attachHttpServer, ExpressAppToken } = await dist('plugins/composition-root.js');
  const { createHttpServer } = await dist('http/app.js');
  const { loadSettings } = await dist('plugins/settings.js');
  const { ProviderRegistry } = await dist('plugins/provider-registry.js');
  const { PinoLogger } = await dist('adapters/logging/pino-logger.js');
  const { openMigratedSqlite } = await dist('adapters/storage/sqlite/database.js');
  const { LifecycleToken } = await dist('plugins/tokens.js');
  const { FakeTwilioServer } = await dist('test/fakes/twilio/fake-twilio-server.js');
  const { createTwilioPlugin } = await dist('providers/twilio/index.js');
  const { computeTwilioSignature } = await dist('providers/twilio/twilio-signature.js');
  const { exampleWorkflowDefinition } = await dist('core/workflows/example-definition.js');
  const { readWav } = await dist('core/voice/wav.js');
  const { BUILT_IN_PROVIDER_PLUGINS } = await dist('plugins/provider-registry.builtins.js');

  const fixture = (name) => readWav(new Uint8Array(readFileSync(fileURLToPath(new URL(`../test/fixtures/audio/${name}.wav`, import.meta.url))))).data;
  const trim = (data) => data.subarray(4000, data.length - 5600); // lead 500 ms, tail 700 ms
  const speech = trim(fixture('yes-i-will-attend'));
  const barge = trim(fixture('barge-in-long')).subarray(0, 8000);
  // the backchannel without its silent lead and tail; the noises whole (2 s each)
  const noises = [
    // longer than interruption_min_speech_ms (~420 and ~620 ms of sustained speech): API.md 13 has speech that long
    // stop the agent, so theirs is a barge-in judged false afterwards (target: resumed); the rest must never clear
    { name: 'uh-huh', audio: trim(fixture('uh-huh')), overThreshold: true },
    { name: 'mm-hmm', audio: trim(fixture('mm-hmm')), overThreshold: true },
    { name: 'yeah', audio: trim(fixture('yeah')) },
    { name: 'cough', audio: trim(fixture('cough')) },
    { name: 'noise-low-2s', audio: fixture('noise-low-2s') },
    { name: 'noise-hiss-2s', audio: fixture('noise-hiss-2s') },
  ];
  // what the fake STTs hear in each fixture (noise: nothing)
  const manifest = JSON.parse(readFileSync(fileURLToPath(new URL('../test/fixtures/audio/fixtures.json', import.meta.url)), 'utf8'));
  const known = Object.entries(manifest.speech).map(([name, text]) => ({ text, audio: fixture(name) }));

  const worker = startHarness();
  const fakes = await new Promise((r) => worker.once('message', (m) => r(m)));
  const fakeUrl = fakes.url;
  const numberOf = (stt) => `+1555000${7777 + STT_MODES.indexOf(stt)}`;
  const twilio = await FakeTwilioServer.start({ numbers: STT_MODES.map((stt) => ({ phoneNumber: numberOf(stt) })) });

  const PUBLIC = 'https://cp.example.test';
  let seq = 0;
  const results = [];
  for (const vad of VADS) {
  const dataDir = freshDir(`voice-${vad}-${process.pid}`); // its own: another run of this bench at the same time must not wipe it
  const settings = loadSettings({ CALLPLANE_SIGNUP: 'open', CALLPLANE_DATA_DIR: dataDir, LOG_LEVEL: 'warn', CALLPLANE_PUBLIC_URL: PUBLIC, CALLPLANE_ALLOW_PRIVATE_NETWORK: 'true', CALLPLANE_VOICE_VAD: vad, CALLPLANE_VOICE_VAD_INFERENCE: VAD_INFERENCE, CALLPLANE_MEDIA_MAX_SESSIONS: '1000' });
  const plugins = BUILT_IN_PROVIDER_PLUGINS.filter((p) => p.manifest.id !== 'twilio').concat(createTwilioPlugin({ apiBaseUrl: twilio.url, client: { sleep: async () => undefined } }));
  const providers = ProviderRegistry.builtIn({ allowPrivateNetwork: true }, plugins);
  const logger = PinoLogger.create({ level: 'warn', extraSensitive: providers.sensitiveFieldNames() });
  const container = buildContainer({ settings, secretKey: 'bench-secret-key-0123456789abcdefghijklmnop', logger, sqlite: openMigratedSqlite(':memory:'), providers });
  const server = createHttpServer(container.get(ExpressAppToken));
  attachHttpServer(container, server);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  await container.get(LifecycleToken).start();
  const url = `http://127.0.0.1:${server.address().port}`;
  const request = async (method, path, body, headers = {}) => {
    const res = await fetch(url + `/api/v1${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
    const text = await res.text();
    let parsed = text;
    try { parsed = JSON.parse(text); } catch { /* markup */ }
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return parsed;
  };
  const signup = await request('POST', '/auth/signup', { email: 'voice-bench@example.com', password: 'correct horse battery', organization_name: 'Bench' });
  const auth = { authorization: `Bearer ${signup.token}` };
  /**
   * Per fixture: played, interrupted (a clear while it played or within 1 s after), and of those how many the
   * agent resumed (a false_interruption entry in the call's run log inside the fixture's window) or not.
   */
  const falseInterruptionsOf = async (done, calls, workflowId) => {
    const runs = [];
    for (let page = 1; ; page++) {
      const p = await request('GET', `/workflow/${workflowId}/runs?page=${page}&limit=100`, undefined, auth);
      runs.push(...p.runs);
      if (page >= p.total_pages) break;
    }
    const resumesOf = (from) => {
      const run = runs.find((r) => r.name.endsWith(from));
      return (run?.logs?.entries ?? []).filter((e) => e.event === 'false_interruption').map((e) => Date.parse(e.ts));
    };
    const out = {};
    for (const [name, f] of Object.entries(done.falseInterruptions)) out[name] = { played: f.played, clears: f.clears, resumed: 0, for_good: 0, over_threshold: noises.some((n) => n.name === name && n.overThreshold) };
    for (const w of done.noiseWindows) {
      if (!w.cleared) continue;
      const resumed = resumesOf(calls[w.call].from).some((t) => t >= w.from && t <= w.to);
      out[w.name][resumed ? 'resumed' : 'for_good']++;
    }
    return out;
  };
  const ai = await request('POST', '/organizations/ai-services', { name: 'Fake', config: { provider: 'openai', api_key: 'sk-bench', base_url: fakeUrl } }, auth);
  const dg = await request('POST', '/organizations/ai-services', { name: 'Fake Deepgram', config: { provider: 'deepgram', api_key: fakes.deepgram.key, base_url: fakes.deepgram.url } }, auth);
  const tw = await request('POST', '/organizations/telephony-configs', { name: 'Twilio', config: { provider: 'twilio', account_sid: twilio.accountSid, auth_token: twilio.authToken } }, auth);
  for (const stt of STT_MODES) {
  const wf = await request('POST', '/workflow/create/definition', {
    name: `Bench ${stt}`, workflow_definition: exampleWorkflowDefinition, template_context_variables: { first_name: 'Dana', appointment_time: 'Tuesday' },
    workflow_configurations: { llm: { service_id: ai.id, model: 'm' }, stt: stt === 'streaming' ? { service_id: dg.id, model: 'nova-3' } : { service_id: ai.id, model: 'whisper-1' }, tts: { service_id: ai.id, voice: 'alloy' }, interruption_min_speech_ms: MIN_SPEECH_MS, user_idle_timeout_seconds: 60 },
  }, auth);
  await request('POST', `/organizations/telephony-configs/${tw.id}/phone-numbers`, { address: numberOf(stt), inbound_workflow_id: wf.id }, auth);

  for (const n of CALLS) {
    // the first sample (a full GC) before the webhooks: a GC between the webhooks and the streams would hold up
    // the greetings being prepared in that ring (~0.1 s with Silero loaded), which no call of a service meets
    const memory = n === Math.max(...CALLS) ? memoryPerCall(n) : null;
    const calls = [];
    for (let i = 0; i < n; i++) {
      const callSid = `CA${String(++seq).padStart(32, '0')}`;
      const from = `+1555${String(seq).padStart(7, '0')}`; // names the call's run ("Inbound call from ...")
      const form = { AccountSid: twilio.accountSid, CallSid: callSid, From: from, To: numberOf(stt), Direction: 'inbound', CallStatus: 'ringing' };
      const path = '/telephony/twilio/inbound';
      const twiml = await request('POST', path, new URLSearchParams(form).toString(), { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': computeTwilioSignature(twilio.authToken, `${PUBLIC}/api/v1${path}`, form) });
      const streamUrl = /<Stream url="([^"]+)"/.exec(twiml)[1];
      const parameters = Object.fromEntries([...twiml.matchAll(/<Parameter name="([^"]+)" value="([^"]+)"\/>/g)].map((m) => [m[1], m[2]]));
      calls.push({ url: url.replace(/^http/, 'ws') + new URL(streamUrl).pathname, callSid, parameters, from, answeredAt: performance.timeOrigin + performance.now() });
    }
    const memorySampled = memory?.start() ?? null;
    const loopDelay = (await import('node:perf_hooks')).monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const gc = gcPauses();
    const cpu0 = process.cpuUsage();
    const batcherStats = () => {
      const f = container.get(Symbol.for('callplane.VoiceActivityDetectorFactory'));
      return f.kind === 'silero' ? { ...f.primary.sharedBatcher.stats } : null;
    };
    const batcher0 = batcherStats();
    const main0 = mainThreadCpuMs();
    const t0 = performance.now();
    const serviceLag = process.env.BENCH_VOICE_DEBUG ? lagTimeline(t0) : null;
    // typed arrays: cloned as bytes (arrays of numbers took the worker ~0.3 s to take in, delaying the fakes' answers)
    worker.postMessage({ type: 'calls', ringMs: RING_MS, arrivalMs: ARRIVAL_MS, calls, speech, barge, noises, known });
    const done = await new Promise((r) => worker.on('message', function onDone(m) {
      if (m.type === 'done') {
        worker.off('message', onDone);
        r(m);
      }
    }));
    const wall = performance.now() - t0;
    const serviceLagTimeline = serviceLag?.stop() ?? null;
    await new Promise((r) => setTimeout(r, 500)); // the last runs' records land after their hang-ups
    const cpu = process.cpuUsage(cpu0);
    const mainCpu = main0 === null ? null : mainThreadCpuMs() - main0;
    loopDelay.disable();
    const gcStats = gc.stop();
    const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
    const slowTurns = async (d, cs, workflowId, ref) => {
      const slow = d.latencyAt.filter(([, , , ms]) => ms - ref > 100);
      if (slow.length === 0) return [];
      const runs = (await request('GET', `/workflow/${workflowId}/runs?page=1&limit=100`, undefined, auth)).runs;
      return slow.map(([call, turn, at, ms]) => {
        const entries = runs.find((r) => r.name.endsWith(cs[call].from))?.logs?.entries?.filter((e) => e.event === 'turn') ?? [];
        return { call, turn, at_ms: at, latency_ms: ms, service: entries[turn]?.details ?? null };
      });
    };
    const sttMs = stt === 'streaming' ? STT_MS : mean(done.fake.stt); // the Deepgram fake's set final delay
    const reference = VAD_HANGOVER_MS + sttMs + mean(done.fake.llm) + mean(done.fake.tts);
    const p50 = percentile(done.latencies, 50);
    const p95 = percentile(done.latencies, 95);
    const result = {
      vad, ...(vad === 'silero' ? { vad_inference: VAD_INFERENCE } : {}), stt, calls: n, arrival_ms: ARRIVAL_MS, turns: done.latencies.length, replies_before_end_of_speech: done.early, failures: done.failures.length, failure_examples: done.failures.slice(0, 3),
      latency_p50_ms: round(p50), latency_p95_ms: round(p95), reference_ms: round(reference),
      // BENCH_VOICE_DEBUG=1: every turn as [call, turn, ms into the run, latency]
      ...(process.env.BENCH_VOICE_DEBUG ? { latency_all: done.latencyAt } : {}),
      overhead_p50_ms: round(p50 - reference), overhead_p95_ms: round(p95 - reference),
      // the same turns and barge-ins measured from the level line (the callers' first and last voiced frame), the
      // measure until 2026-11-29: it ended "Yes, I will attend." 31.8 ms before its sound did (see the file comment)
      level_line: {
        overhead_p50_ms: round(percentile(done.latenciesFromLine, 50) - reference), overhead_p95_ms: round(percentile(done.latenciesFromLine, 95) - reference),
        barge_in_p50_ms: round(percentile(done.bargeInsFromLine, 50)), barge_in_p95_ms: round(percentile(done.bargeInsFromLine, 95)),
      },
      ...(stt === 'streaming' ? { interim_every_ms: INTERIM_MS } : {}),
      ...(TOKEN_MS > 0 ? { llm_token_ms: TOKEN_MS } : {}),
      fake_ms: { vad_hangover: VAD_HANGOVER_MS, stt: round(sttMs), llm_first_token: round(mean(done.fake.llm)), tts_first_audio: round(mean(done.fake.tts)) },
      first_words: { calls: done.firstWords.length, p50_ms: round(percentile(done.firstWords, 50)), p95_ms: round(percentile(done.firstWords, 95)), target_ms: FIRST_WORDS_TARGET_MS, ring_min_ms: RING_MS, ring_p50_ms: round(percentile(done.rings, 50)) },
      false_interruptions: await falseInterruptionsOf(done, calls, wf.id),
      // BENCH_VOICE_DEBUG=1: the first call's per-turn latency entries as the service measured them (its VAD's
      // end of speech → first audio sent, and each provider's time)
      ...(process.env.BENCH_VOICE_DEBUG ? { first_call_turns: (await request('GET', `/workflow/${wf.id}/runs?page=1&limit=100`, undefined, auth)).runs.find((r) => r.name.endsWith(calls[0].from))?.logs?.entries?.filter((e) => e.event === 'turn').map((e) => e.details) } : {}),
      // BENCH_VOICE_DEBUG=1: the turns more than 100 ms over the reference, each with the service's own entry for it
      // (its VAD's end of speech → first audio sent, stt = final after the VAD's stop, model first token, first TTS
      // audio): the wire's latency minus the service's is time in the sockets and event loops at either end
      // BENCH_VOICE_DEBUG=1: the largest lateness of a 50 ms timer per 500 ms of the run, in the service and in the harness
      // BENCH_VOICE_DEBUG=1: binary audio messages the Deepgram fake received (each one a socket write of the service)
      ...(process.env.BENCH_VOICE_DEBUG && stt === 'streaming' ? { deepgram_audio_messages_per_call: round(done.deepgramAudio.messages / n) } : {}),
      ...(process.env.BENCH_VOICE_DEBUG ? { loop_lag_ms_per_500ms: { service: serviceLagTimeline, harness: done.harnessLag } } : {}),
      ...(process.env.BENCH_VOICE_DEBUG ? { slow_turns: await slowTurns(done, calls, wf.id, reference) } : {}),
      // BENCH_VOICE_DEBUG=1 also lists every barge-in time (to see the shape of a tail), and each as [call, ms into
      // the run at the caller's onset, ms] (`at`: to set the tail beside loop_lag_ms_per_500ms)
      barge_in: { events: done.bargeIns.length, p50_ms: round(percentile(done.bargeIns, 50)), p95_ms: round(percentile(done.bargeIns, 95)), target_ms: MIN_SPEECH_MS + 100, ...(process.env.BENCH_VOICE_DEBUG ? { all: done.bargeIns.map(round).sort((a, b) => a - b), at: done.bargeInAt } : {}) },
      service_cpu_percent_of_core: round((100 * (cpu.user + cpu.system) / 1000) / wall),
      event_loop_delay_p99_ms: round(loopDelay.percentile(99) / 1e6),
      callers_worker_event_loop_p99_ms: round(done.workerLoopP99Ms),
      service_gc: gcStats,
      // Silero's batcher during the calls: windows scored, batches (and of them on the inference thread), urgent
      // windows (a barge-in's last two: scored at once) and of those scored inline because the thread was late
      ...(batcher0 ? { vad_batcher: ((after) => Object.fromEntries(['windows', 'batches', 'offloaded', 'urgent', 'hedged', 'lost'].map((k) => [k, after[k] - batcher0[k]])))(batcherStats()) } : {}),
      // the service alone (main thread; the callers and fakes run on the worker): robust to other load on the machine
      service_main_thread_cpu_ms_per_call: mainCpu === null ? null : round(mainCpu / n),
      service_main_thread_cpu_percent_of_core_per_call: mainCpu === null ? null : Math.round((1000 * mainCpu) / wall / n) / 10,
      wall_s: round(wall / 1000),
      // where the callers and fakes ran: their own process (pinned to the last core, the service to the first) or
      // a worker thread of the service's process
      harness: HARNESS === 'worker' ? 'worker thread' : pinned ? 'own process, pinned apart' : 'own process',
      service_node_flags: process.execArgv.filter((f) => f.startsWith('--') && !f.startsWith('--cpu-prof') && !f.startsWith('--import')),
      ...(memorySampled ? { memory_per_call: await memorySampled } : {}),
    };
    results.push(result);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  }
  }
  await container.get(LifecycleToken).stop?.();
  server.closeAllConnections?.();
  await new Promise((r) => server.close(r));
  rmSync(dataDir, { recursive: true, force: true });
  }
  report({ name: 'voice', results });
  await worker.terminate();
  await twilio.close();
  process.exit(0);
}


/**
 * BENCH_VOICE_DEBUG=1: an event loop's lateness over time: a 50 ms timer's delay past its due time, the largest per
 * 500 ms from `t0` (performance.now()), to see which process (the service or the harness) lags in a burst.
 */
function lagTimeline(t0) {
  const out = [];
  let due = performance.now() + 50;
  let timer = null;
  const tick = () => {
    const now = performance.now();
    const bucket = Math.floor((now - t0) / 500);
    out[bucket] = Math.max(out[bucket] ?? 0, Math.round(now - due));
    due = now + 50;
    timer = setTimeout(tick, 50);
  };
  timer = setTimeout(tick, 50);
  return { stop: () => { clearTimeout(timer); return Array.from(out, (x) => x ?? 0); } };
}

const round = (x) => (Number.isFinite(x) ? Math.round(x * 10) / 10 : null);

/**
 * Memory per concurrent talking call (issue 12: <= 3 MB), at the largest step only: the service's live heap and
 * array buffers (the main thread's isolate: audio, recordings' windows) and the process's RSS (which also holds the
 * callers' worker: an upper bound), after a full GC just before the calls' webhooks and again MEMORY_AT_MS after
 * `start()` (the calls' streams start then), divided by the calls. Two samples in all (each two forced GCs, see
 * `sample`). The second stops the
 * service's thread for 150-450 ms with 50 calls live (BENCH_VOICE_DEBUG's loop_lag_ms_per_500ms), which production
 * never does, so it is taken where no latency or barge-in is being measured: after every call's barge-in (~25 s
 * into a lockstep run, up to ARRIVAL_MS later when spread), while the calls play their fixture turns (which a
 * stall cannot make interrupt) and are all still connected (a call lasts ~74 s). Until 2026-11-28 it was taken
 * 8 s in, among the last calls' first turns, which it delayed (their replies land at 5-8.5 s in lockstep).
 */
const MEMORY_AT_MS = Math.max(ARRIVAL_MS, 1000) + 34_000;
// BENCH_VOICE_DEBUG=1 with BENCH_VOICE_MEMORY_AT_MS=15000,45000,...: more samples, each a forced full GC at that
// time after `start()` (each stalls the service, so latencies of such a run are not comparable), listed in
// `memory_per_call.samples`; the first one is the reported figure. To see whether what a call holds grows with its
// length: a longer script (BENCH_VOICE_TURNS) and samples spread over it. BENCH_VOICE_HEAPSNAPSHOT=<dir> also
// writes a heap snapshot of the service after each sample's GC (seconds of stall each; the service only: the
// harness runs apart) and one before the calls, to compare what is retained by constructor.
const MEMORY_SAMPLES_MS = process.env.BENCH_VOICE_DEBUG && process.env.BENCH_VOICE_MEMORY_AT_MS
  ? process.env.BENCH_VOICE_MEMORY_AT_MS.split(',').map(Number).filter((x) => x > 0).sort((a, b) => a - b)
  : [MEMORY_AT_MS];
const HEAP_SNAPSHOT_DIR = process.env.BENCH_VOICE_DEBUG ? process.env.BENCH_VOICE_HEAPSNAPSHOT : undefined;
function memoryPerCall(n) {
  const gc = memoryGc();
  const sample = (label) => {
    // twice: after one forced full GC, `arrayBuffers` still counts most of the dead buffers (V8 frees them on a
    // sweeper after the GC returns, and a 2026-11-28 micro read 61-76 of 78 MB of dropped buffers still counted);
    // the second GC finishes the first one's sweep. With one, the figure was the audio garbage since the last GC.
    gc();
    gc();
    const m = process.memoryUsage();
    const snapshot = HEAP_SNAPSHOT_DIR ? v8.writeHeapSnapshot(`${HEAP_SNAPSHOT_DIR}/service-${n}-${label}.heapsnapshot`) : undefined;
    return { heap: m.heapUsed, buffers: m.arrayBuffers, rss: m.rss, ...(snapshot ? { snapshot } : {}) };
  };
  const before = sample('before');
  const mb = (x) => Math.round((x / n / 1048576) * 100) / 100;
  const of = (at, during) => ({
    at_ms: at, heap_mb: mb(during.heap - before.heap), array_buffers_mb: mb(during.buffers - before.buffers),
    heap_and_buffers_mb: mb(during.heap + during.buffers - before.heap - before.buffers), rss_mb: mb(during.rss - before.rss), target_mb: 3,
    ...(during.snapshot ? { snapshot: during.snapshot } : {}),
  });
  return { start: () => new Promise((resolve) => {
    const t0 = performance.now();
    const samples = [];
    const next = () => {
      const at = MEMORY_SAMPLES_MS[samples.length];
      setTimeout(() => {
        samples.push(of(at, sample(`${at}ms`)));
        if (samples.length < MEMORY_SAMPLES_MS.length) return next();
        resolve({ ...samples[0], ...(samples.length > 1 ? { samples } : {}) });
      }, Math.max(0, at - (performance.now() - t0)));
    };
    next();
  }) };
}

/**
 * The service thread's garbage-collection pauses while the calls run (PerformanceObserver 'gc' entries of the main
 * thread; the memory sample's two forced collections left out): how many, their total and longest, and how many
 * were over 10 ms, each of which an event-loop delay sample sees (issue 12: p99 <= 20 ms).
 */
function gcPauses(t0 = performance.now()) {
  const pauses = [];
  const take = (entries) => {
    for (const e of entries) if (!(e.detail?.flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED)) pauses.push({ ms: e.duration, kind: e.detail?.kind, at: e.startTime });
  };
  const observer = new PerformanceObserver((list) => take(list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  return {
    stop() {
      take(observer.takeRecords()); // the entries not yet delivered
      observer.disconnect();
      const sum = (xs) => round(xs.reduce((a, p) => a + p.ms, 0));
      const minor = pauses.filter((p) => p.kind === constants.NODE_PERFORMANCE_GC_MINOR);
      const major = pauses.filter((p) => p.kind === constants.NODE_PERFORMANCE_GC_MAJOR);
      return {
        scavenges: minor.length, scavenge_ms: sum(minor), mark_compacts: major.length, mark_compact_ms: sum(major),
        mark_compact_max_ms: round(Math.max(0, ...major.map((p) => p.ms))),
        // incremental marking steps and weak-callback processing
        other: pauses.length - minor.length - major.length, other_ms: round(sum(pauses) - sum(minor) - sum(major)),
        max_ms: round(Math.max(0, ...pauses.map((p) => p.ms))), over_10ms: pauses.filter((p) => p.ms > 10).length,
        // BENCH_VOICE_DEBUG=1: each pause over 10 ms as [ms into the run (performance.now() - t0), ms, 'major' | 'minor' | kind]
        ...(process.env.BENCH_VOICE_DEBUG ? { over_10ms_at: pauses.filter((p) => p.ms > 10).map((p) => [Math.round(p.at - t0), round(p.ms), p.kind === constants.NODE_PERFORMANCE_GC_MAJOR ? 'major' : p.kind === constants.NODE_PERFORMANCE_GC_MINOR ? 'minor' : p.kind]) } : {}),
      };
    },
  };
}

let gcFn = null;
function memoryGc() {
  if (gcFn) return gcFn;
  if (typeof globalThis.gc === 'function') return (gcFn = globalThis.gc);
  v8.setFlagsFromString('--expose-gc');
  gcFn = runInNewContext('gc');
  return gcFn;
}

/**
 * The callers and the fakes (the harness): by default a process of their own, so they share nothing with the
 * service but the machine: not its V8 helper threads, libuv pool or heap. In a worker thread of the service's
 * process (the bench until 2026-11-28, BENCH_VOICE_HARNESS=worker) the harness's own bursts (the fake TTS then
 * computed every answer's tone) ran beside the service, and its timers, which time the wire, waited for them.
 * BENCH_VOICE_PIN=1 also pins the service's process to the first core and the harness to the last (`taskset`),
 * the "served by one core" to the letter. Not the default: on this shared 2-core machine a pinned service
 * cannot leave a core another process is busy on (its scavenge pauses were ~1.7x longer, --single-threaded-gc or
 * not); in back-to-back runs at load 1.4-3 pinned gave 84-164 / 281-565 ms turn overhead p50 / p95 against
 * 58-121 / 92-227 unpinned (docs/benchmarks.md section 10 notes). The service's event loop is one thread either
 * way, and its CPU per call is measured on that thread alone.
 */
const HARNESS = process.env.BENCH_VOICE_HARNESS ?? 'process';
const PIN = process.env.BENCH_VOICE_PIN === '1' && os.cpus().length > 1 && hasTaskset();

function startHarness() {
  if (HARNESS === 'worker') return new Worker(fileURLToPath(import.meta.url), { workerData: { worker: true } });
  const args = [fileURLToPath(import.meta.url)];
  const env = { ...process.env, BENCH_VOICE_HARNESS_CHILD: '1' };
  const opts = { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced', env };
  const child = PIN ? spawn('taskset', ['-c', String(os.cpus().length - 1), process.execPath, ...args], opts) : spawn(process.execPath, args, opts);
  return {
    once: (event, f) => child.once(event, f),
    on: (event, f) => child.on(event, f),
    off: (event, f) => child.off(event, f),
    postMessage: (m) => child.send(m),
    terminate: async () => {
      child.disconnect();
      child.kill();
    },
  };
}

/** The service's process on the first core, every thread of it (V8's helpers and libuv's pool too). */
function pinService() {
  if (!PIN) return false;
  const r = spawnSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
  return r.status === 0;
}

if (process.env.BENCH_VOICE_HARNESS_CHILD) await workerMain({ postMessage: (m) => process.send(m), on: (event, f) => process.on(event, f) });
else if (isMainThread) await main();
else if (workerData?.worker) await workerMain(parentPort);
