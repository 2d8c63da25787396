/**
 * A child process (run from dist/ by adapters/vad/silero-thread.test.ts) whose main thread never loads onnxruntime
 * itself: it starts a Silero inference thread alone, kills its worker as a crash would, and waits for the restarted
 * thread to score a batch. Prints {restarted, failures, scored} and exits 0, or exits 1 when the thread is not back
 * within 10 s. A worker started after another one ended could not load the native binding ("Module did not
 * self-register") unless this thread held it loaded: that is what this process checks, the tests' own process has
 * the binding loaded by the inline session.
 */
import { SileroInferenceThread } from '../../adapters/vad/silero-thread.js';
import { SILERO_STATE_LENGTH, defaultSileroModelPath, sileroInputLength } from '../../adapters/vad/silero-session.js';

const failures: string[] = [];
let back: () => void = () => undefined;
const restarted = new Promise<void>((resolve) => (back = resolve));
const thread = new SileroInferenceThread(defaultSileroModelPath(), (m) => failures.push(m), { restart: { delayMs: 10 }, onRestart: () => back() });
const giveUp = setTimeout(() => {
  process.stdout.write(`${JSON.stringify({ restarted: false, failures })}\n`);
  process.exit(1);
}, 10_000);
if (!(await thread.ready)) {
  process.stderr.write(`the inference thread did not start: ${failures.join('; ')}\n`);
  process.exit(1);
}
// idle (no batch away): terminating it now is not inside a native call
await (thread as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
await restarted;
const r = await thread.run(8000, 1, new Float32Array(sileroInputLength(8000)), new Float32Array(SILERO_STATE_LENGTH));
clearTimeout(giveUp);
process.stdout.write(`${JSON.stringify({ restarted: true, failures, scored: r.runs })}\n`);
await thread.close();
